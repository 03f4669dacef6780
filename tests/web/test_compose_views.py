"""The compose endpoint: roles travel as text parts before each image; bad input names the field."""

from __future__ import annotations

import base64

import orjson
import pytest
from django.test import AsyncClient

from studio.gateway.jobs.base import wait_for_running_jobs
from studio.gateway.jobs.inputs import InputImage
from studio.web.compose_views import native_compose_body, standard_prompt
from tests.web.library_factories import make_image

pytestmark = pytest.mark.django_db(transaction=True)


async def signed_in(user) -> AsyncClient:
    client = AsyncClient()
    await client.aforce_login(user)
    return client


async def post(client, body):
    return await client.post("/compose/start", orjson.dumps(body), content_type="application/json")


def test_native_body_puts_each_role_before_its_image():
    import uuid

    images = [InputImage(asset_id=uuid.uuid4(), mime="image/png", owner_id=1, team_id=None, data=b"a"),
              InputImage(asset_id=uuid.uuid4(), mime="image/jpeg", owner_id=1, team_id=None, data=b"b")]
    parts = native_compose_body("make it", images, ["the cat", "the sofa"])["contents"][0]["parts"]
    assert parts == [{"text": "Image 1: the cat"}, {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(b"a").decode()}},
                     {"text": "Image 2: the sofa"}, {"inlineData": {"mimeType": "image/jpeg", "data": base64.b64encode(b"b").decode()}},
                     {"text": "make it"}]
    assert standard_prompt("make it", ["the cat", "the sofa"]) == "Image 1: the cat.\nImage 2: the sofa.\nmake it"


async def test_compose_records_roles_and_lineage(alice):
    from studio.models import Generation

    cat = await make_image_async(alice.user, "a cat")
    sofa = await make_image_async(alice.user, "a sofa")
    client = await signed_in(alice.user)
    response = await post(client, {"model": "delta-3.1-flash-image", "prompt": "together",
                                   "items": [{"asset": str(cat.id), "role": "the cat"},
                                             {"asset": str(sofa.id), "role": "the sofa"}]})
    assert response.status_code == 201, response.content
    await wait_for_running_jobs()
    generation = await Generation.objects.aget(id=response.json()["job"])
    assert generation.status == "succeeded"
    assert [i["role"] for i in generation.parameters["tool"]["inputs"]] == ["the cat", "the sofa"]
    assert generation.parent_id == cat.generation_id


async def make_image_async(user, prompt):
    from asgiref.sync import sync_to_async

    return await sync_to_async(make_image)(user, prompt)


@pytest.mark.parametrize("items, model, status, param", [
    ("one", "kappa-image-1", 400, "items"),
    (1, "kappa-image-1", 400, "items"),
    (2, "sigma-5.0-image", 404, "model"),
    (4, "delta-3.1-flash-lite-image", 400, "items"),  # takes at most 3
])
async def test_bad_compositions_name_the_field(alice, items, model, status, param):
    images = [await make_image_async(alice.user, f"image {i}") for i in range(4)]
    count = 1 if items == "one" else items
    body = {"model": model, "prompt": "x", "items": [{"asset": str(a.id), "role": "r"} for a in images[:count]]}
    if items == "one":
        body["items"] = "not a list"
    response = await post(await signed_in(alice.user), body)
    assert response.status_code == status
    assert response.json()["error"]["param"] == param


async def test_missing_role_and_forbidden_image(alice, make_account):
    from asgiref.sync import sync_to_async

    mine = await make_image_async(alice.user, "mine")
    bob = await sync_to_async(make_account)("bob")
    theirs = await make_image_async(bob.user, "theirs")
    client = await signed_in(alice.user)
    response = await post(client, {"model": "kappa-image-1", "prompt": "x",
                                   "items": [{"asset": str(mine.id), "role": "a"}, {"asset": str(theirs.id), "role": ""}]})
    assert response.json()["error"]["param"] == "items[1].role"
    response = await post(client, {"model": "kappa-image-1", "prompt": "x",
                                   "items": [{"asset": str(mine.id), "role": "a"}, {"asset": str(theirs.id), "role": "b"}]})
    assert response.status_code == 400 and response.json()["error"]["param"] == "items[1].asset"
