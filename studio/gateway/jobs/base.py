"""What every studio job shares: a Generation row created up front, numbered live events kept on
that row, a background task, and one final ``job.completed`` or ``job.failed``.

A job's events carry an increasing ``seq``; each is appended to ``Generation.events`` before it is
published, so a page that reconnects (or the same job opened on another device) can replay what
it missed from the record. The channel layer only notifies.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from decimal import Decimal
from typing import Any

from asgiref.sync import sync_to_async
from django.urls import reverse

from studio.core.errors import GatewayError
from studio.core.principal import Principal
from studio.gateway.cost import display
from studio.gateway.live import job_group, make_event, publish, user_group

logger = logging.getLogger(__name__)

_running: set[asyncio.Task] = set()  # keep references so tasks are not garbage-collected


def asset_url(asset_id: uuid.UUID) -> str:
    return reverse("asset-file", args=[asset_id])


def create_generation(generation_id: uuid.UUID, principal: Principal, model_id: str, prompt: str,
                      parameters: dict[str, Any]) -> None:
    from studio.models import Generation

    Generation.objects.create(id=generation_id, user_id=principal.user_id, team_id=principal.team_id,
                              model_id=model_id, route="studio", prompt=prompt, parameters=parameters)


def append_event(generation_id: uuid.UUID, event: dict[str, Any]) -> None:
    from django.db import transaction

    from studio.models import Generation

    with transaction.atomic():
        generation = Generation.objects.select_for_update().only("events").get(id=generation_id)
        generation.events = [*generation.events, event]
        generation.save(update_fields=["events"])


def share_with_team(asset_ids: list[uuid.UUID], team_id: int | None) -> None:
    """Outputs of a job made for a team are visible to that team (the user chose to save there)."""
    if team_id is None or not asset_ids:
        return
    from studio.models import Asset, Visibility

    Asset.objects.filter(id__in=asset_ids).update(visibility=Visibility.TEAM)


class StudioJob:
    """Subclasses implement ``prepare`` (validate, raise GatewayError) and ``execute`` (stream)."""

    def __init__(self, principal: Principal, model_id: str, prompt: str, compare: str | None = None) -> None:
        self.principal = principal
        self.model_id = model_id
        self.prompt = prompt
        self.compare = compare  # the compare run this job belongs to, if any
        self.id = uuid.uuid4()
        self.seq = 0
        self.final_count = 0
        self.outputs: list[uuid.UUID] = []
        self.group: str | None = None  # "set" or "layers": the outputs are one group, shown together

    async def prepare(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    async def execute(self) -> dict[str, Any]:  # pragma: no cover - abstract
        """Run the engine call, emitting frames; returns the extra data of ``job.completed``."""
        raise NotImplementedError

    def recorded_cost(self) -> Decimal | None:
        """What the call was charged, as its usage record keeps it (set when the record is handed over)."""
        return None

    async def emit(self, kind: str, data: dict[str, Any]) -> None:
        self.seq += 1
        event = make_event(kind, str(self.id), self.seq, data)
        await sync_to_async(append_event)(self.id, event)
        await publish(job_group(str(self.id)), event)

    async def create_row(self, parameters: dict[str, Any]) -> None:
        if self.compare:
            parameters = {**parameters, "compare": self.compare}
        await sync_to_async(create_generation)(self.id, self.principal, self.model_id, self.prompt, parameters)

    def launch(self) -> None:
        task = asyncio.get_running_loop().create_task(self.run())
        _running.add(task)
        task.add_done_callback(_running.discard)

    async def run(self) -> None:
        started = time.perf_counter()
        await self.emit("job.started", {"model": self.model_id, "prompt": self.prompt, "compare": self.compare,
                                        "group": self.group})
        try:
            summary = await self.execute()
        except GatewayError as exc:
            await self.emit("job.failed", {"status": exc.status, "message": exc.message, "param": exc.param})
            return
        except Exception:
            logger.exception("studio job %s failed", self.id)
            await self.emit("job.failed", {"status": 500, "message": "internal error"})
            return
        await sync_to_async(share_with_team)(self.outputs, self.principal.team_id)
        cost = self.recorded_cost()
        await self.emit("job.completed", {
            **summary, "images": self.final_count, "model": self.model_id,
            "duration_ms": int((time.perf_counter() - started) * 1000),
            "cost_usd": display(cost) if cost is not None else None,
        })
        await publish(user_group(self.principal.user_id), make_event("gallery.changed", str(self.id), 0, {}))


async def wait_for_running_jobs(timeout: float = 60) -> None:
    """Tests and shutdown: let every job that was launched finish."""
    if _running:
        await asyncio.wait_for(asyncio.gather(*list(_running), return_exceptions=True), timeout)
