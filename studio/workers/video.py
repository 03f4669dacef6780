"""The video poll loop: claims due task rows with a lease (``gateway.video.leases``) and polls them."""

from __future__ import annotations

import asyncio

from asgiref.sync import sync_to_async

from studio.gateway.video import poll as video_poll
from studio.gateway.video import webhooks as video_webhooks
from studio.gateway.video.leases import BATCH, WORKER_ID, claim_due


async def run_once(worker_id: str = WORKER_ID, limit: int = BATCH) -> int:
    ids = await sync_to_async(claim_due)(worker_id, limit)
    if ids:
        await asyncio.gather(*(video_poll.process(task_id, worker_id) for task_id in ids))
    return len(ids)


async def poll_due_videos() -> None:
    """The registered background job."""
    await run_once()


async def deliver_due_webhooks() -> None:
    """The registered background job: client webhooks that are due (retries, or left by a dead process)."""
    await video_webhooks.deliver_due(WORKER_ID)
