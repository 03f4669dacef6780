"""Keys for users: create (secret once), name, restrict, expire, revoke, usage; only one's own."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from studio.models import ApiKey, UsageRecord
from studio.models.accounts import hash_secret
from tests.web.library_factories import login, make_team

pytestmark = pytest.mark.django_db(transaction=True)
SECRET = re.compile(r"sgw-[A-Za-z0-9_-]{40,}")


def test_create_shows_the_secret_once_and_stores_only_its_hash(web, make_account):
    alice = make_account("alice")
    login(web, alice)
    tomorrow = (timezone.localdate() + timedelta(days=1)).isoformat()
    created = web.post("/keys/", {"name": "render farm", "models": ["delta-3.1-flash-image", "kappa-image-1"],
                                  "expires": tomorrow})
    assert created.status_code == 302 and created["Location"] == "/keys/"  # post, redirect, get
    response = web.get("/keys/")
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    secret = SECRET.search(response.content.decode()).group(0)
    key = ApiKey.objects.get(owner=alice.user, name="render farm")
    assert key.secret_hash == hash_secret(secret) and secret.startswith(key.prefix)
    assert key.allowed_models == ["delta-3.1-flash-image", "kappa-image-1"]
    assert key.expires_at.date() > timezone.localdate()
    again = web.get("/keys/").content.decode()  # a reload: no second key, and the secret is gone
    assert secret not in again and key.prefix in again and "render farm" in again
    assert ApiKey.objects.filter(owner=alice.user, name="render farm").count() == 1


@pytest.mark.parametrize("form, field", [
    ({"name": ""}, "name"), ({"name": "x", "models": ["no-such-model"]}, "models"),
    ({"name": "x", "expires": "2001-01-01"}, "expires"), ({"name": "x", "expires": "soon"}, "expires"),
])
def test_bad_key_forms_say_which_field(web, make_account, form, field):
    login(web, make_account("alice"))
    response = web.post("/keys/", form)
    assert response.status_code == 400
    assert f"{field}:" in response.content.decode()
    assert not ApiKey.objects.filter(name="x").exists()


def test_team_keys_only_for_teams_where_the_user_may_add(web, make_account):
    alice, vic = make_account("alice"), make_account("vic")
    team = make_team(alice.user, "Design", vic=(vic.user, "viewer"))
    login(web, vic)
    assert web.post("/keys/", {"name": "sneaky", "team": team.id}).status_code == 400
    login(web, alice)
    web.post("/keys/", {"name": "team key", "team": team.id})
    assert ApiKey.objects.get(name="team key").team_id == team.id


def test_edit_and_revoke_own_keys_only(web, make_account):
    alice, eve = make_account("alice"), make_account("eve")
    login(web, eve)
    assert web.post(f"/keys/{alice.key.id}/revoke").status_code == 404
    assert web.post(f"/keys/{alice.key.id}/update", {"name": "mine now"}).status_code == 404
    assert "alice key" not in web.get("/keys/").content.decode()
    login(web, alice)
    web.post(f"/keys/{alice.key.id}/update", {"name": "renamed", "models": ["kappa-image-1"]})
    alice.key.refresh_from_db()
    assert alice.key.name == "renamed" and alice.key.allowed_models == ["kappa-image-1"]
    web.post(f"/keys/{alice.key.id}/revoke")
    alice.key.refresh_from_db()
    assert alice.key.revoked and "revoked" in web.get("/keys/").content.decode()


def test_each_key_shows_its_recent_usage(web, make_account):
    alice = make_account("alice")
    other, _ = ApiKey.issue(alice.user, name="quiet key")
    for i in range(12):
        UsageRecord.objects.create(api_key=alice.key, user=alice.user, model_id="delta-3.1-flash-image",
                                   route="native", total_tokens=100, images=1, latency_ms=40 + i,
                                   status_code=200 if i else 429)
    login(web, alice)
    page = web.get("/keys/").content.decode()
    assert "12 calls · 1200 tokens · 12 images · 1 errors" in page
    assert page.count("<td>delta-3.1-flash-image</td>") == 10  # the latest ten calls
    assert "no calls" in page  # the quiet key
