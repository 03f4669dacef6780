"""The prompt library: history without duplicates, saving with tags, searching, trimming."""

from __future__ import annotations

import pytest

from studio.gateway import prompt_library as library
from studio.models import Prompt

pytestmark = pytest.mark.django_db


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user(username="poet")


def test_normalize_tags():
    assert library.normalize_tags("Portrait, neon,  portrait, ,") == ["neon", "portrait"]
    assert library.normalize_tags(["B", "a", " "]) == ["a", "b"]
    assert library.normalize_tags(",".join(f"t{i:02}" for i in range(30))) == [f"t{i:02}" for i in range(20)]
    assert library.normalize_tags("x" * 50) == ["x" * library.MAX_TAG]


def test_remember_bumps_the_same_text_instead_of_duplicating(user):
    first = library.remember(user.id, "  a red kite  ")
    again = library.remember(user.id, "a red kite")
    assert first.id == again.id and again.use_count == 2 and again.last_used >= first.last_used
    assert Prompt.objects.filter(owner=user).count() == 1
    assert library.remember(user.id, "   ") is None and library.remember(user.id, None) is None


def test_remember_keeps_users_apart(user, django_user_model):
    other = django_user_model.objects.create_user(username="other")
    library.remember(user.id, "shared words")
    library.remember(other.id, "shared words")
    assert Prompt.objects.filter(text="shared words").count() == 2


def test_history_is_trimmed_but_saved_prompts_stay(user, monkeypatch):
    monkeypatch.setattr(library, "HISTORY_KEEP", 3)
    library.save(user.id, "keeper")
    for i in range(6):
        library.remember(user.id, f"prompt {i}")
    history = list(Prompt.objects.filter(owner=user, saved=False).order_by("-last_used").values_list("text", flat=True))
    assert history == ["prompt 5", "prompt 4", "prompt 3"]
    assert Prompt.objects.filter(owner=user, saved=True, text="keeper").exists()


def test_save_turns_the_history_row_into_the_saved_one(user):
    remembered = library.remember(user.id, "a lighthouse")
    saved = library.save(user.id, " a lighthouse ", title="  Coast ", tags="Sea, night")
    assert saved.id == remembered.id and saved.saved and saved.title == "Coast" and saved.tags == ["night", "sea"]
    assert saved.use_count == 1
    fresh = library.save(user.id, "new one", tags=["x"])
    assert fresh.saved and fresh.use_count == 0


def test_search_by_text_title_and_exact_tag(user):
    library.save(user.id, "a neon portrait", title="City", tags="portrait, neon")
    library.save(user.id, "a quiet forest", title="Woods", tags="nature")
    library.save(user.id, "portraits of cats", tags="cats")
    library.remember(user.id, "an unsaved portrait")
    assert {p.text for p in library.search(user.id, q="PORTRAIT")} == {"a neon portrait", "portraits of cats"}
    assert [p.text for p in library.search(user.id, q="woods")] == ["a quiet forest"]
    # The tag filter matches whole tags: "portrait" does not match the "portraits" text nor another tag.
    assert [p.text for p in library.search(user.id, tag=" Portrait ")] == ["a neon portrait"]
    assert [p.text for p in library.search(user.id, q="unsaved", saved=False)] == ["an unsaved portrait"]
    assert library.all_tags(user.id) == ["cats", "nature", "neon", "portrait"]
