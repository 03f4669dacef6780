"""A turn of an edit session on an images-API model (the standard family's edits route, or the
layered family's image-to-image): the turn's picture (its parent's output, or the session's
source) goes as the reference and the instruction as the prompt. These models keep no
conversation, so each turn stands on the picture alone; the tree, head and regenerate work the
same as with the native family.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async

from studio.core.entries import ModelEntry
from studio.core.errors import BadRequest, GatewayError
from studio.core.principal import Principal
from studio.gateway.images.engine import family_of
from studio.gateway.jobs.images import ImagesJob, images_body
from studio.gateway.jobs.inputs import InputImage, load_inputs
from studio.gateway.native import edit_sessions
from studio.models.edits import EditSession, EditTurn


def turn_picture(user, session: EditSession, parent: EditTurn | None) -> list[InputImage]:
    """The picture a turn edits (sync): the parent's output, or the session's source image."""
    asset_id = parent.output_id if parent is not None else session.source_id
    if asset_id is None:
        raise BadRequest("this turn has no picture to edit; choose a turn that made one", param="parent")
    return load_inputs(user, [asset_id])


class ImagesEditJob(ImagesJob):
    def __init__(self, principal: Principal, session: EditSession, parent: EditTurn | None, instruction: str,
                 model: ModelEntry, picture: list[InputImage], options: dict[str, Any]) -> None:
        body = images_body(model.model_id, family_of(model), instruction, options, picture, principal.user_id)
        body.pop("n", None)
        super().__init__(principal, model.model_id, body, instruction)
        self.session = session
        self.parent = parent
        self.instruction = instruction
        self.turn: EditTurn | None = None

    async def prepare(self) -> None:
        await super().prepare()
        self.turn = await sync_to_async(edit_sessions.start_turn)(
            self.session, self.parent, self.instruction, self.model_id,
            edit_sessions.instruction_content(self.instruction), self.id)

    async def execute(self) -> dict[str, Any]:
        assert self.turn is not None, "prepare() first"
        try:
            summary = await super().execute()
        except GatewayError as exc:
            await self._finish({"status": exc.status, "message": exc.message, "code": exc.code or ""})
            raise
        except Exception:
            await self._finish({"status": 500, "message": "internal error"})
            raise
        await self._finish(None)
        return {**summary, "session": str(self.session.id), "turn": str(self.turn.id), "status": self.turn.status}

    async def _finish(self, error: dict[str, Any] | None) -> None:
        output = self.outputs[-1] if self.outputs else None
        self.turn = await sync_to_async(edit_sessions.finish_turn)(
            self.turn, content=None, result=None, output_id=output, generation_id=self.id, error=error)
