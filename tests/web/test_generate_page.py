"""The Generate page: every image model with its capabilities, prefills from the URL, and the
reference-image upload."""

from __future__ import annotations

import io
import json

import pytest
from PIL import Image

from studio.gateway.media.storage import store_bytes
from studio.models import Asset, Membership, Team
from studio.models.accounts import Role

pytestmark = pytest.mark.django_db(transaction=True)


def png(size: tuple[int, int] = (40, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, "orange").save(buffer, "PNG")
    return buffer.getvalue()


def script_json(response, element_id: str):
    html = response.content.decode()
    start = html.index(f'id="{element_id}"')
    start = html.index(">", start) + 1
    return json.loads(html[start:html.index("</script>", start)])


def test_every_image_model_is_offered_with_its_capabilities(web, alice):
    web.force_login(alice.user)
    response = web.get("/generate/")
    assert response.status_code == 200
    models = {m["id"]: m for m in script_json(response, "models-data")}
    assert set(models) == {"delta-3.1-flash-lite-image", "delta-3.1-flash-image", "delta-3-pro-image",
                           "kappa-image-1", "sigma-5.0-image"}
    assert models["kappa-image-1"]["family"] == "standard"
    assert models["sigma-5.0-image"]["family"] == "layered"
    assert models["delta-3-pro-image"]["family"] == "native"
    assert models["sigma-5.0-image"]["capabilities"]["max_images"] == 15
    assert models["delta-3.1-flash-image"]["capabilities"]["max_reference_images"] == 14


def test_prefill_from_prompt_model_input_and_job(web, alice, make_account):
    bob = make_account("bob")
    mine = store_bytes(png(), "image/png", owner_id=alice.user.id)
    theirs = store_bytes(png(), "image/png", owner_id=bob.user.id)
    web.force_login(alice.user)
    response = web.get("/generate/", {"prompt": "a quiet harbour", "model": "sigma-5.0-image",
                                      "input": [str(mine.id), str(theirs.id), "nonsense"],
                                      "job": ["8d3c0a51-4df4-4c55-9a43-0f3f2f6f0a10", "bad"]})
    html = response.content.decode()
    assert "a quiet harbour</textarea>" in html
    assert '<option value="sigma-5.0-image" selected>' in html
    state = script_json(response, "page-state")
    assert [i["id"] for i in state["inputs"]] == [str(mine.id)]  # someone else's image is not offered
    assert state["inputs"][0]["url"] == f"/assets/{mine.id}/file"
    assert state["jobs"] == ["8d3c0a51-4df4-4c55-9a43-0f3f2f6f0a10"]


def test_teams_offered_for_saving_are_those_the_user_adds_to(web, alice):
    design = Team.objects.create(name="Design", slug="design")
    audit = Team.objects.create(name="Audit", slug="audit")
    Membership.objects.create(team=design, user=alice.user, role=Role.MEMBER)
    Membership.objects.create(team=audit, user=alice.user, role=Role.VIEWER)
    web.force_login(alice.user)
    state = script_json(web.get("/generate/"), "page-state")
    assert state["teams"] == [{"id": design.id, "name": "Design"}]


def test_upload_stores_a_private_input_image(web, alice):
    web.force_login(alice.user)
    upload = io.BytesIO(png((120, 80)))
    upload.name = "sketch.png"
    response = web.post("/generate/upload", {"file": upload})
    assert response.status_code == 201
    body = response.json()
    asset = Asset.objects.get(id=body["id"])
    assert asset.owner_id == alice.user.id and asset.is_input and (asset.width, asset.height) == (120, 80)
    assert body["url"] == f"/assets/{asset.id}/file"


def test_upload_refuses_what_is_not_an_image(web, alice):
    web.force_login(alice.user)
    upload = io.BytesIO(b"just some text, not a picture")
    upload.name = "notes.png"
    response = web.post("/generate/upload", {"file": upload})
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "file"
    assert web.post("/generate/upload", {}).json()["error"]["param"] == "file"


def test_signed_out_visitors_are_sent_to_sign_in(web, catalog):
    assert web.get("/generate/").status_code == 302
    assert web.post("/generate/upload", {}).status_code == 302
