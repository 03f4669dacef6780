"""Input images of images requests: every source ends as a checked image or a refusal naming its field."""

from __future__ import annotations

import base64
import uuid

import pytest

from studio.core.errors import BadRequest, NotFound
from studio.core.images import SourceImage
from studio.core.principal import Principal
from studio.gateway.images import inputs
from studio.gateway.media.storage import store_bytes
from tests.gateway.images.conftest import png


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_image_from_bytes_sniffs_and_measures():
    image = inputs.image_from_bytes(png("red", (30, 20)), "images[0]", declared="image/jpeg")
    assert (image.mime, image.width, image.height, image.field) == ("image/png", 30, 20, "images[0]")


@pytest.mark.parametrize(("data", "code"), [
    (b"", "invalid_image"), (b"<svg/>", "invalid_image"), (png()[:40], "invalid_image"),
])
def test_image_from_bytes_refusals(data: bytes, code: str):
    with pytest.raises(BadRequest) as exc:
        inputs.image_from_bytes(data, "mask")
    assert (exc.value.param, exc.value.code) == ("mask", code)


def test_too_many_pixels(monkeypatch):
    monkeypatch.setattr(inputs, "MAX_PIXELS", 100)
    with pytest.raises(BadRequest) as exc:
        inputs.image_from_bytes(png(size=(20, 20)), "image")
    assert exc.value.code == "image_too_large" and "20x20" in exc.value.message


async def test_strings_data_uris_and_raw_base64():
    who = Principal(user_id=1)
    data = png("green")
    assert (await inputs.from_string("data:image/png;base64," + b64(data), "image", who)).data == data
    assert (await inputs.from_string("  " + b64(data) + "\n", "image", who)).data == data
    with pytest.raises(BadRequest) as exc:
        await inputs.from_string("ftp://example.com/a.png", "images[2].image_url", who)
    assert exc.value.param == "images[2].image_url"
    with pytest.raises(BadRequest) as exc:
        await inputs.from_string("http://127.0.0.1/a.png", "image", who)  # never fetched from private addresses
    assert exc.value.param == "image"


async def test_resolve_object_forms_name_their_key():
    who = Principal(user_id=1)
    data = png("blue")
    uri = "data:image/png;base64," + b64(data)
    assert (await inputs.resolve({"image_url": {"url": uri}}, "images[0]", who)).field == "images[0].image_url"
    assert (await inputs.resolve({"url": uri}, "images[1]", who)).field == "images[1].url"
    assert (await inputs.resolve({"b64_json": b64(data)}, "images[2]", who)).data == data
    for bad in ({}, {"image_url": 5}, 42, ""):
        with pytest.raises(BadRequest) as exc:
            await inputs.resolve(bad, "images[3]", who)
        assert exc.value.param == "images[3]"


def test_parse_file_id():
    value = uuid.uuid4()
    assert inputs.parse_file_id(f"file-{value}") == value
    assert inputs.parse_file_id(str(value)) == value
    assert inputs.parse_file_id("file-nope") is None


@pytest.mark.django_db(transaction=True)
async def test_file_ids_name_assets_the_caller_may_read(crew):
    from asgiref.sync import sync_to_async

    data = png("purple")
    private = await sync_to_async(store_bytes)(data, "image/png", owner_id=crew.admin.id)
    team = await sync_to_async(store_bytes)(data, "image/png", owner_id=crew.admin.id, team_id=crew.team.id)
    mine = await inputs.resolve({"file_id": f"file-{private.id}"}, "images[0]", Principal(user_id=crew.admin.id))
    assert mine.asset_id == private.id and mine.data == data and mine.field == "images[0].file_id"
    member = Principal(user_id=crew.member.id, team_id=crew.team.id)
    assert (await inputs.from_string(f"file-{team.id}", "image", member)).asset_id == team.id
    for file_id in (f"file-{private.id}", f"file-{uuid.uuid4()}", "file-garbage"):
        with pytest.raises(NotFound) as exc:
            await inputs.from_file_id(file_id, "image", member)
        assert (exc.value.param, exc.value.code, exc.value.status) == ("image", "file_not_found", 404)


def test_check_mask():
    image = SourceImage(data=b"", mime="image/jpeg", width=10, height=10, field="image")
    inputs.check_mask(image, SourceImage(data=b"", mime="image/png", width=10, height=10, field="mask"))
    with pytest.raises(BadRequest) as exc:
        inputs.check_mask(image, SourceImage(data=b"", mime="image/png", width=10, height=11, field="mask"))
    assert (exc.value.param, exc.value.code) == ("mask", "invalid_mask_size")
    with pytest.raises(BadRequest) as exc:
        inputs.check_mask(image, SourceImage(data=b"", mime="image/jpeg", width=10, height=10, field="mask"))
    assert exc.value.code == "invalid_mask"
