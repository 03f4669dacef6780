"""Edit-session turns on images-API models: each turn edits one picture (the parent's output or
the session's source) with the instruction as the prompt."""

from __future__ import annotations

import io

import pytest
from asgiref.sync import sync_to_async
from PIL import Image

from studio.core.errors import BadRequest
from studio.gateway.jobs.edit_images import turn_picture
from studio.gateway.native import edit_sessions
from tests.gateway.jobs.edit_support import edit, new_session, settle, turn_of
from tests.realtime.socket_helpers import connect

pytestmark = pytest.mark.django_db(transaction=True)


async def test_images_models_edit_turn_by_turn_on_the_previous_picture(alice, catalog):
    """Every model that edits is offered, not only the native family: a kappa turn edits the
    session's source, a sigma turn under it edits that turn's output, and both follow the words."""
    session = await new_session(alice.user)
    socket = await connect(alice.user)
    first = await edit(socket, session=str(session.id), instruction="make it black and white", model="kappa-image-1")
    assert first[-1]["type"] == "job.completed" and first[-1]["data"]["status"] == "succeeded", first[-1]
    turn = await turn_of(first)
    assert turn.model_id == "kappa-image-1" and turn.output_id is not None
    second = await edit(socket, session=str(session.id), parent=str(turn.id), instruction="add a red star",
                        model="sigma-5.0-image")
    assert second[-1]["data"].get("status") == "succeeded", second[-1]
    child = await turn_of(second)
    assert child.parent_id == turn.id and child.model_id == "sigma-5.0-image"
    output = await sync_to_async(lambda: child.output.file.read())()
    image = Image.open(io.BytesIO(output)).convert("RGB")
    red = sum(1 for r, g, b in image.getdata() if r > 180 and g < 80 and b < 80)
    assert red > 50  # the star the instruction asked for, drawn on the grey picture
    await socket.disconnect()
    await settle()


async def test_a_turn_without_a_picture_cannot_be_edited(alice, catalog):
    session = await new_session(alice.user)
    source = await sync_to_async(turn_picture)(alice.user, session, None)
    assert [image.asset_id for image in source] == [session.source_id]
    failed = await sync_to_async(edit_sessions.start_turn)(
        session, None, "make it blue", "kappa-image-1", edit_sessions.instruction_content("make it blue"), None)
    with pytest.raises(BadRequest) as caught:
        await sync_to_async(turn_picture)(alice.user, session, failed)
    assert caught.value.param == "parent"
