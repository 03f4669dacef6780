"""Helpers of the edit-session tests: a stored source picture, a session on it, and one edit
over the studio socket."""

from __future__ import annotations

import io

from asgiref.sync import sync_to_async
from PIL import Image

from studio.gateway import recording
from studio.gateway.jobs.base import wait_for_running_jobs
from studio.gateway.media.storage import store_bytes
from studio.gateway.native import edit_sessions
from studio.models.edits import EditSession, EditTurn
from tests.realtime.socket_helpers import END, collect_until, of_kind

MODEL = "delta-3.1-flash-image"


def png(color: str = "teal", size: tuple[int, int] = (96, 64)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, "PNG")
    return buffer.getvalue()


async def new_session(user, team_id: int | None = None) -> EditSession:
    source = await sync_to_async(store_bytes)(png(), "image/png", owner_id=user.id, is_input=True)
    return await sync_to_async(edit_sessions.create_session)(user, source, MODEL, team_id=team_id, title="Poster")


async def edit(socket, **message) -> list[dict]:
    await socket.send_json_to({"action": "edit", "ref": "e", **message})
    return await collect_until(socket, END | {"job.rejected"})


async def settle() -> None:
    await wait_for_running_jobs()
    await recording.drain()


async def turn_of(events: list[dict]) -> EditTurn:
    turn_id = of_kind(events, "edit.turn")[0]["data"]["turn"]
    return await EditTurn.objects.select_related("output").aget(id=turn_id)
