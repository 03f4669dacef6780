"""Keys made on the page work on /v1 at once, stop at revoke, and team keys fill the team gallery."""

from __future__ import annotations

import re

import pytest
from django.test import AsyncClient

from studio.gateway import recording
from studio.models import Asset, Visibility
from tests.web.library_factories import make_team

pytestmark = pytest.mark.django_db(transaction=True)
NATIVE = "/v1/models/delta-3.1-flash-image:generateContent"
BODY = {"contents": [{"role": "user", "parts": [{"text": "a lighthouse for the team"}]}]}


async def make_key(web: AsyncClient, **form) -> str:
    response = await web.post("/keys/", form, follow=True)
    assert response.status_code == 200
    return re.search(r"sgw-[A-Za-z0-9_-]{40,}", response.content.decode()).group(0)


async def test_a_new_key_works_and_a_revoked_one_stops(client, make_account):
    alice = make_account("alice")
    web = AsyncClient()
    await web.aforce_login(alice.user)
    secret = await make_key(web, name="script")
    assert (await client.get("/v1/models", headers={"Authorization": f"Bearer {secret}"})).status_code == 200
    from studio.models import ApiKey

    key = await ApiKey.objects.aget(name="script")
    await web.post(f"/keys/{key.id}/revoke")
    assert (await client.get("/v1/models", headers={"Authorization": f"Bearer {secret}"})).status_code == 401


def native_call(secret: str) -> tuple[str, dict, dict]:
    return NATIVE, BODY, {"x-delta-api-key": secret}


def images_call(secret: str) -> tuple[str, dict, dict]:
    return ("/v1/images/generations", {"model": "kappa-image-1", "prompt": "a lighthouse for the team",
                                       "quality": "low"}, {"Authorization": f"Bearer {secret}"})


@pytest.mark.parametrize("call", [native_call, images_call], ids=["native", "images"])
async def test_generations_with_a_team_key_appear_in_the_team_gallery(client, make_account, call):
    alice, bob = make_account("alice"), make_account("bob")
    team = make_team(alice.user, "Design", bob=(bob.user, "viewer"))
    web = AsyncClient()
    await web.aforce_login(alice.user)
    secret = await make_key(web, name="team script", team=str(team.id))
    path, body, headers = call(secret)
    response = await client.post(path, json=body, headers=headers)
    assert response.status_code == 200, response.text
    await recording.drain()
    asset = await Asset.objects.aget(owner=alice.user, is_input=False, is_draft=False)
    assert asset.team_id == team.id and asset.visibility == Visibility.TEAM

    teammate = AsyncClient()
    await teammate.aforce_login(bob.user)
    items = (await teammate.get("/gallery/page", {"team": team.id})).json()["items"]
    assert [i["id"] for i in items] == [str(asset.id)]
    assert items[0]["prompt"] == "a lighthouse for the team"
