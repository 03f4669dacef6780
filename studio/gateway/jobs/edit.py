"""A turn of a multi-turn edit session, run as a studio job.

It is a native image job (the same engine call as /v1 native streaming, with thoughts, text and
images pushed live) whose request is built from the turn's ancestry, and which keeps the exact
Content it sent and received on the turn. Whatever happens, the turn ends answered, blocked or
failed: nothing is left running.

Socket message: ``edit`` {ref, session, parent (a turn id; empty for a first turn on the source
image), instruction, regenerate (a turn id: same parent and instruction again), model, options}.
"""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async

from studio.core.errors import BadRequest, CapabilityMissing, GatewayError, NotFound
from studio.core.principal import Principal
from studio.gateway import snapshot
from studio.gateway.jobs.edit_images import ImagesEditJob, turn_picture
from studio.gateway.jobs.native import NativeJob
from studio.gateway.live import rejection
from studio.gateway.native import edit_sessions
from studio.gateway.native import engine as native_image
from studio.models.edits import EditSession, EditTurn

logger = logging.getLogger(__name__)

EDIT_MODEL_KIND = "native-image"  # multi-turn replay of thought signatures is a native protocol feature


def edit_body(contents: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    """The native request of a turn; without a ratio the model keeps the image's own shape."""
    image_config: dict[str, Any] = {}
    if options.get("image_size"):
        image_config["imageSize"] = str(options["image_size"])
    config: dict[str, Any] = {"responseModalities": ["TEXT", "IMAGE"]}
    if image_config:
        config["imageConfig"] = image_config
    return {"contents": contents, "generationConfig": config}


class EditJob(NativeJob):
    def __init__(self, principal: Principal, session: EditSession, parent: EditTurn | None, instruction: str,
                 model_id: str, contents: list[dict[str, Any]], options: dict[str, Any]) -> None:
        super().__init__(principal, model_id, edit_body(contents, options), instruction)
        self.session = session
        self.parent = parent
        self.instruction = instruction
        self.turn: EditTurn | None = None

    async def prepare(self) -> None:
        await super().prepare()
        user_content = self.body["contents"][-1]
        self.turn = await sync_to_async(edit_sessions.start_turn)(
            self.session, self.parent, self.instruction, self.model_id, user_content, self.id)

    async def execute(self) -> dict[str, Any]:
        assert self.turn is not None, "prepare() first"
        try:
            async for frame in native_image.stream(self.call):
                await self.on_frame(frame)
        except GatewayError as exc:
            await self._finish(error={"status": exc.status, "message": exc.message, "code": exc.code or ""})
            raise
        except Exception:
            await self._finish(error={"status": 500, "message": "internal error"})
            raise
        await self._finish(error=None)
        result = self.result
        return {"finish_reason": result.finish_reason, "block_reason": result.block_reason,
                "prompt_feedback": result.prompt_feedback, "usage": result.usage, "text": result.text,
                "first_byte_ms": self.call.record.first_byte_ms, "session": str(self.session.id),
                "turn": str(self.turn.id), "status": self.turn.status}

    async def _finish(self, error: dict[str, Any] | None) -> None:
        content = edit_sessions.model_content(self.result) if self.result.parts else None
        output = self.outputs[-1] if self.outputs else None
        self.turn = await sync_to_async(edit_sessions.finish_turn)(
            self.turn, content=content, result=self.result, output_id=output, generation_id=self.id, error=error)


def _plan(user, content: dict[str, Any], native: bool = True
          ) -> tuple[EditSession, EditTurn | None, str, list[dict[str, Any]]]:
    """The session, the parent, the instruction and the contents to send (sync: queries, file reads)."""
    access = edit_sessions.session_for(user, content.get("session"))
    session = access.session
    if not access.can_edit:
        raise BadRequest("you can view this team's session but not add turns to it", param="session")
    if content.get("regenerate"):
        again = edit_sessions.turn_in(session, content["regenerate"], "regenerate")
        parent, instruction = edit_sessions.regenerate_target(again)
    else:
        raw_parent = content.get("parent")
        parent = edit_sessions.turn_in(session, raw_parent, "parent") if raw_parent else None
        instruction = edit_sessions.clean_instruction(content.get("instruction"))
    # Only the native family replays the conversation; images models edit the picture alone.
    contents = edit_sessions.request_contents(session, parent, instruction) if native else []
    return session, parent, instruction, contents


def can_edit(model) -> bool:
    """Native models edit in conversation; images models that take a picture edit it turn by turn."""
    caps = model.capabilities or {}
    if model.kind == EDIT_MODEL_KIND:
        return True
    return model.kind == "image" and bool(caps.get("edits") or caps.get("image_to_image"))


async def build_edit_job(user, content: dict[str, Any]) -> EditJob | ImagesEditJob:
    """A validated, recorded turn ready to launch; raises GatewayError naming the field otherwise."""
    snap = await snapshot.get()
    requested = snap.models.get(str(content.get("model") or ""))
    native = requested is None or requested.kind == EDIT_MODEL_KIND
    session, parent, instruction, contents = await database_sync_to_async(_plan)(user, content, native)
    model_id = str(content.get("model") or session.model_id)
    model = snap.models.get(model_id)
    if model is None:
        raise NotFound(f"the model '{model_id}' does not exist", param="model", code="model_not_found")
    if not can_edit(model):
        raise CapabilityMissing(f"'{model_id}' cannot edit images; choose a model that edits")
    options = content.get("options") if isinstance(content.get("options"), dict) else {}
    principal = Principal(user_id=user.id, team_id=session.team_id)
    job: EditJob | ImagesEditJob
    if model.kind == EDIT_MODEL_KIND:
        job = EditJob(principal, session, parent, instruction, model_id, contents, options)
    else:
        picture = await database_sync_to_async(turn_picture)(user, session, parent)
        job = ImagesEditJob(principal, session, parent, instruction, model, picture, {})
    await job.prepare()
    return job


async def start_edit(consumer, content: dict[str, Any]) -> None:
    """The socket's ``edit`` action: start the turn and follow it, or say why not."""
    ref = content.get("ref")
    try:
        job = await build_edit_job(consumer.user, content)
    except GatewayError as exc:
        await consumer.send_json(rejection(ref, exc, str(content.get("model") or "") or None))
        return
    await consumer._start(job, ref)
    await consumer.send_json({"type": "edit.turn", "id": str(job.id), "seq": 0, "ref": ref,
                              "data": {"session": str(job.session.id), "turn": str(job.turn.id),
                                       "parent": str(job.parent.id) if job.parent else None}})
