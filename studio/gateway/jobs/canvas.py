"""Studio jobs started from the mask canvas and the compose page.

They are ordinary images or native jobs (the same engines as /v1) with two additions: the row
keeps what the tool sent (mode, mask asset, frame, roles of each image), and the lineage points at
the picture the designer started from, even when the request itself carried a prepared canvas
rather than that picture's file.
"""

from __future__ import annotations

import asyncio
import contextvars
import uuid
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async

from studio.core.images import ImageJob
from studio.gateway.images import engine as images_engine
from studio.gateway.images.record import ImagesRecord
from studio.gateway.jobs import base as job_base
from studio.gateway.jobs.base import StudioJob
from studio.gateway.jobs.images import ImagesJob
from studio.gateway.jobs.native import NativeJob


@dataclass(slots=True)
class ToolRecord(ImagesRecord):
    source_generation: uuid.UUID | None = None  # the generation that made the picture edited

    def parent_id(self) -> uuid.UUID | None:
        return ImagesRecord.parent_id(self) or self.source_generation


class ToolImagesJob(ImagesJob):
    """An images-API edit from a studio tool (inpaint, outpaint, several-image compose)."""

    def __init__(self, principal, model_id: str, body: dict[str, Any], prompt: str, *,
                 tool: dict[str, Any], source_generation: uuid.UUID | None = None) -> None:
        super().__init__(principal, model_id, body, prompt)
        self.tool = tool
        self.source_generation = source_generation

    async def prepare(self) -> None:
        self.job: ImageJob = await images_engine.prepare_edit(self.principal, self.body)
        self.record = ToolRecord(principal=self.principal, job=self.job, generation_id=self.id, preexisting=True,
                                 extra={"tool": self.tool}, source_generation=self.source_generation)
        await self.create_row({**self.record.parameters(), **self.record.extra})


def _keep_tool_details(generation_id: uuid.UUID, tool: dict[str, Any], parent: uuid.UUID | None) -> None:
    from studio.models import Generation

    generation = Generation.objects.filter(id=generation_id).only("parameters", "parent_id").first()
    if generation is None:
        return
    generation.parameters = {**generation.parameters, "tool": tool}
    fields = ["parameters"]
    if generation.parent_id is None and parent is not None:
        generation.parent_id = parent
        fields.append("parent_id")
    generation.save(update_fields=fields)


class ToolNativeJob(NativeJob):
    """A native request from a studio tool: a whole-picture edit, or a multi-reference composition."""

    def __init__(self, principal, model_id: str, body: dict[str, Any], prompt: str, *,
                 tool: dict[str, Any], source_generation: uuid.UUID | None = None) -> None:
        super().__init__(principal, model_id, body, prompt)
        self.tool = tool
        self.source_generation = source_generation

    async def create_row(self, parameters: dict[str, Any]) -> None:
        await super().create_row({**parameters, "tool": self.tool})

    async def execute(self) -> dict[str, Any]:
        summary = await super().execute()
        # The native record rewrites the row's parameters when it is persisted: wait for it, then
        # put the tool's details (and the lineage to the picture started from) back.
        from studio.gateway import recording

        await recording.drain()
        await sync_to_async(_keep_tool_details)(self.id, self.tool, self.source_generation)
        return summary


def launch_from_request(job: StudioJob) -> None:
    """Run a job started by an HTTP view outside that request's context.

    A task created inside a request inherits its context, whose thread-sensitive executor closes
    when the response is sent; the job's database calls would then fail. An empty context gives
    the job the server's own executor, as a job started from the socket has.
    """
    task = asyncio.get_running_loop().create_task(job.run(), context=contextvars.Context())
    job_base._running.add(task)
    task.add_done_callback(job_base._running.discard)
