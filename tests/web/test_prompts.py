"""The prompt library: history from runs, save and tag, search, reuse, and privacy."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from studio.gateway import prompt_library
from studio.models import Prompt
from tests.web.library_factories import login

pytestmark = pytest.mark.django_db(transaction=True)
RECENT = "id=\"recent-prompts\""


def test_remember_keeps_one_history_row_per_text_and_counts_uses(make_account):
    alice = make_account("alice")
    prompt_library.remember(alice.user.id, "a red fox")
    prompt_library.remember(alice.user.id, "a blue whale")
    row = prompt_library.remember(alice.user.id, "  a red fox ")
    assert row.use_count == 2 and Prompt.objects.filter(owner=alice.user).count() == 2
    assert prompt_library.remember(alice.user.id, "   ") is None


def test_save_tag_search_and_reuse(web, make_account):
    alice = make_account("alice")
    prompt_library.remember(alice.user.id, "neon city at night, rain")
    login(web, alice)
    web.post("/prompts/save", {"text": "neon city at night, rain", "title": "Neon", "tags": "City, night ,city"})
    web.post("/prompts/save", {"text": "a quiet forest", "tags": "nature"})
    saved = Prompt.objects.get(title="Neon")
    assert saved.tags == ["city", "night"] and saved.saved and saved.use_count == 1  # the history row, saved

    page = web.get("/prompts/", {"q": "neon"}).content.decode()
    assert "neon city at night" in page and "a quiet forest" not in page.split(RECENT)[0]
    page = web.get("/prompts/", {"tag": "nature"}).content.decode()
    assert "a quiet forest" in page.split(RECENT)[0] and "Neon" not in page.split(RECENT)[0]
    assert f"/generate/?prompt={quote('neon city at night, rain', safe='').replace('%20', '+')}" in page \
        or "/generate/?prompt=neon+city+at+night%2C+rain" in page

    web.post(f"/prompts/{saved.id}/edit", {"title": "Neon rain", "tags": "rain"})
    saved.refresh_from_db()
    assert saved.title == "Neon rain" and saved.tags == ["rain"]


def test_history_lists_recent_prompts_and_saves_with_one_click(web, make_account):
    alice = make_account("alice")
    for text in ("first idea", "second idea"):
        prompt_library.remember(alice.user.id, text)
    login(web, alice)
    recent = web.get("/prompts/").content.decode().split(RECENT)[1]
    assert recent.index("second idea") < recent.index("first idea")
    web.post("/prompts/save", {"text": "first idea"})
    assert Prompt.objects.get(text="first idea").saved


def test_removing_a_used_prompt_keeps_it_in_the_history(web, make_account):
    alice = make_account("alice")
    used = prompt_library.save(alice.user.id, "used one")
    prompt_library.remember(alice.user.id, "used one")
    unused = prompt_library.save(alice.user.id, "never run")
    login(web, alice)
    web.post(f"/prompts/{used.id}/delete")
    web.post(f"/prompts/{unused.id}/delete")
    assert not Prompt.objects.get(id=used.id).saved
    assert not Prompt.objects.filter(id=unused.id).exists()


def test_prompts_are_private(web, make_account):
    alice, eve = make_account("alice"), make_account("eve")
    secret = prompt_library.save(alice.user.id, "alice's secret recipe")
    login(web, eve)
    assert "secret recipe" not in web.get("/prompts/", {"q": "secret"}).content.decode()
    assert web.post(f"/prompts/{secret.id}/edit", {"title": "mine"}).status_code == 404
    assert web.post(f"/prompts/{secret.id}/delete").status_code == 404


def test_empty_prompt_is_refused_naming_the_field(web, make_account):
    login(web, make_account("alice"))
    response = web.post("/prompts/save", {"text": " "}, HTTP_ACCEPT="application/json")
    assert response.status_code == 400 and response.json()["error"]["param"] == "text"
