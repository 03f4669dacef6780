"""The background worker: a registry of periodic jobs run in one asyncio loop.

Inside the web process it is started by the ASGI lifespan; ``python manage.py run_worker`` runs
the same loop in a process of its own. Jobs keep their durable state in rows, so any number of
workers can run and a killed one loses nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from django.conf import settings
from django.utils.module_loading import import_string

from studio.gateway import heartbeat

logger = logging.getLogger("studio.workers")


@dataclass(frozen=True)
class Job:
    path: str  # dotted path of an ``async def job() -> None``
    every: float  # seconds between runs


DEFAULT_JOBS = [
    Job("studio.workers.maintenance.sweep_stale_generations", every=60.0),
    Job("studio.workers.video.poll_due_videos", every=1.0),
    Job("studio.workers.video.deliver_due_webhooks", every=1.0),
    Job("studio.workers.budgets.deliver_due_budget_webhooks", every=2.0),
    Job("studio.workers.maintenance.prune_sandbox_results", every=3600.0),
    Job("studio.workers.maintenance.prune_expired_responses", every=3600.0),
    Job("studio.gateway.heartbeat.beat", every=heartbeat.EVERY),
]


def jobs() -> list[Job]:
    return [*DEFAULT_JOBS, *getattr(settings, "STUDIO_WORKER_JOBS", [])]


async def run_forever(stop: asyncio.Event | None = None) -> None:
    from studio.gateway import events, health, snapshot  # noqa: F401 - they register their event handlers

    stop = stop or asyncio.Event()
    events.start()  # idempotent: inside the web process the lifespan has started it already
    schedule = [(job, import_string(job.path)) for job in jobs()]
    next_run = {job.path: 0.0 for job, _ in schedule}
    while not stop.is_set():
        now = time.monotonic()
        for job, func in schedule:
            if next_run[job.path] <= now:
                next_run[job.path] = now + job.every
                await _run(job, func)
        wait = max(0.05, min(next_run.values()) - time.monotonic())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=wait)


async def _run(job: Job, func: Callable[[], Awaitable[None]]) -> None:
    try:
        await func()
    except asyncio.CancelledError:
        raise
    except Exception:  # one failing job must not stop the others
        logger.exception("background job %s failed", job.path)
