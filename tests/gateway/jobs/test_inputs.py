"""Reference images of a studio job: ids parsed, readable assets loaded in order, limits per model."""

from __future__ import annotations

import base64
import io
import uuid

import pytest
from PIL import Image

from studio.core.errors import BadRequest
from studio.gateway.jobs import inputs
from studio.gateway.media.storage import store_bytes
from studio.models import Visibility

pytestmark = pytest.mark.django_db


def png(color: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (5, 5), color).save(buffer, "PNG")
    return buffer.getvalue()


def test_parse_ids():
    first, second = uuid.uuid4(), uuid.uuid4()
    assert inputs.parse_ids([str(first), second]) == [first, second]
    assert inputs.parse_ids(None) == [] and inputs.parse_ids("") == []
    with pytest.raises(BadRequest) as exc:
        inputs.parse_ids(str(first))
    assert exc.value.param == "inputs"
    with pytest.raises(BadRequest) as exc:
        inputs.parse_ids([str(first), "nope"])
    assert exc.value.param == "inputs[1]"
    with pytest.raises(BadRequest) as exc:
        inputs.parse_ids([str(uuid.uuid4()) for _ in range(inputs.MAX_INPUTS + 1)])
    assert exc.value.param == "inputs"


def test_load_inputs_in_order_with_their_bytes(crew):
    red, blue = png("red"), png("blue")
    a = store_bytes(red, "image/png", owner_id=crew.member.id)
    b = store_bytes(blue, "image/png", owner_id=crew.admin.id, team_id=crew.team.id)  # team-visible
    loaded = inputs.load_inputs(crew.member, [b.id, a.id])
    assert [(i.asset_id, i.data, i.owner_id, i.team_id) for i in loaded] == [
        (b.id, blue, crew.admin.id, crew.team.id), (a.id, red, crew.member.id, None)]
    assert loaded[0].data_uri() == "data:image/png;base64," + base64.b64encode(blue).decode()


def test_unreadable_inputs_look_missing(crew):
    private = store_bytes(png("green"), "image/png", owner_id=crew.admin.id)
    assert private.visibility == Visibility.PRIVATE
    for ids, param in (([private.id], "inputs[0]"), ([uuid.uuid4()], "inputs[0]")):
        with pytest.raises(BadRequest) as exc:
            inputs.load_inputs(crew.member, ids)
        assert exc.value.param == param and "no such image" in exc.value.message
    not_image = store_bytes(b"%PDF-1.4", "application/pdf", owner_id=crew.member.id)
    mine = store_bytes(png("white"), "image/png", owner_id=crew.member.id)
    with pytest.raises(BadRequest) as exc:
        inputs.load_inputs(crew.member, [mine.id, not_image.id])
    assert exc.value.param == "inputs[1]"


def test_check_limit_is_the_models():
    image = inputs.InputImage(asset_id=uuid.uuid4(), mime="image/png", owner_id=1, team_id=None, data=b"x")
    inputs.check_limit([image] * 3, {"max_reference_images": 3}, "m")
    with pytest.raises(BadRequest) as exc:
        inputs.check_limit([image] * 4, {"max_reference_images": 3}, "m")
    assert exc.value.param == "inputs" and "at most 3" in exc.value.message
    with pytest.raises(BadRequest):
        inputs.check_limit([image], {}, "text-only")
