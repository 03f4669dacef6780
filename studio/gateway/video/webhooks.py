"""Relaying task status changes to a client's ``callback_url`` as signed webhooks.

Each change is an outbox row (``WebhookDelivery``) written in the same transaction as the change
itself; the process that made the change tries it at once, and the worker's
``deliver_due_webhooks`` job picks up whatever is left (retries, or rows of a process that died).
A row is leased before it is sent and marked delivered right after the client's 2xx, so with several
workers a change is sent by one at a time and, once acknowledged, never again. Delivery is at least
once: a process killed between the client's 2xx and the mark leaves the row to be sent again when its
lease ends, with the same ``X-Studio-Delivery``. Deliveries of one task go in order: a row waits while
an earlier change of its task is undelivered.

The body is the task record in the client's protocol; ``X-Studio-Signature`` carries
``sha256=<HMAC-SHA256 of the body>`` keyed with the API key's webhook secret, and
``X-Studio-Delivery`` identifies the change (``<task id>:<seq>``) for clients that deduplicate.
The client's URL gets the same SSRF rules as any client-supplied URL: http(s) only, every resolved
address public, the connection pinned to the checked address, no redirects.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx
import orjson
from asgiref.sync import sync_to_async
from django.db import close_old_connections
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from studio.core.errors import BadRequest
from studio.gateway.media.safe_fetch import post_public
from studio.gateway.video import settings as video_settings
from studio.gateway.video.leases import WORKER_ID
from studio.gateway.video.signing import webhook_secret, webhook_signature
from studio.gateway.video.view import TaskView, view_of
from studio.models.videos import VideoTask, WebhookDelivery

logger = logging.getLogger(__name__)
TIMEOUT = 10.0
LEASE_SECONDS = 2 * TIMEOUT
SIGNATURE_HEADER = "X-Studio-Signature"
BATCH = 50
_pending: set[asyncio.Task] = set()


class Refused(Exception):
    """The URL breaks the SSRF rules: retrying cannot help."""


RecordRenderer = Callable[[TaskView], dict[str, Any]]
_renderer: list[RecordRenderer] = []


def use_renderer(renderer: RecordRenderer) -> None:
    """Set how a task is spelled in its client's protocol. The inbound layer owns the wire formats
    (``api/video/render.py``); the app registers it at start-up, in every process."""
    _renderer[:] = [renderer]


def render_record(task: TaskView) -> dict[str, Any]:
    if not _renderer:
        raise RuntimeError("no video task renderer registered (StudioConfig.ready registers api.video.render)")
    return _renderer[0](task)


def enqueue(task: VideoTask) -> bool:
    """Write the outbox row for the task's current change (call inside the change's transaction)."""
    if not task.client_callback_url:
        return False
    _, created = WebhookDelivery.objects.get_or_create(
        task_id=task.id, seq=task.event_seq,
        defaults={"status": task.status, "url": task.client_callback_url,
                  "body": orjson.dumps(render_record(view_of(task)))},
    )
    return created


def deliver_soon(task_id: str) -> None:
    """Try the task's waiting deliveries now, in the background (the worker retries what is left)."""
    job = asyncio.get_running_loop().create_task(deliver_due(WORKER_ID, task_id=task_id))
    _pending.add(job)
    job.add_done_callback(_pending.discard)


def _undelivered() -> Q:
    return Q(delivered_at__isnull=True, gave_up_at__isnull=True)


def claim_due(worker_id: str, limit: int = BATCH, task_id: str | None = None) -> list[int]:
    """Lease due rows whose task has no earlier change still undelivered; their ids."""
    close_old_connections()
    now = timezone.now()
    earlier = WebhookDelivery.objects.filter(_undelivered(), task_id=OuterRef("task_id"), seq__lt=OuterRef("seq"))
    free = Q(lease_owner="") | Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lte=now)
    due = WebhookDelivery.objects.filter(_undelivered(), free, next_attempt_at__lte=now).exclude(Exists(earlier))
    if task_id is not None:
        due = due.filter(task_id=task_id)
    claimed = []
    for row_id in due.order_by("next_attempt_at").values_list("id", flat=True)[:limit]:
        # One conditional UPDATE per row: of several workers exactly one wins it.
        if WebhookDelivery.objects.filter(Q(id=row_id) & free & _undelivered()).update(
                lease_owner=worker_id, lease_expires_at=now + timedelta(seconds=LEASE_SECONDS)):
            claimed.append(row_id)
    return claimed


def _claimed(row_id: int, worker_id: str) -> tuple[WebhookDelivery, str] | None:
    row = WebhookDelivery.objects.select_related("task").filter(id=row_id, lease_owner=worker_id).first()
    if row is None:
        return None
    return row, webhook_secret(row.task.api_key_id, row.task.user_id)


def _finish(row: WebhookDelivery, worker_id: str, outcome: str, error: str = "") -> None:
    now = timezone.now()
    mine = WebhookDelivery.objects.filter(id=row.id, lease_owner=worker_id)
    if outcome == "delivered":
        mine.update(delivered_at=now, lease_owner="", lease_expires_at=None, attempts=row.attempts + 1)
        return
    delays = video_settings.webhook_delays()
    attempts = row.attempts + 1
    if outcome == "refused" or attempts > len(delays):
        mine.update(gave_up_at=now, lease_owner="", lease_expires_at=None, attempts=attempts, last_error=error)
        logger.warning("webhook %s:%d given up: %s", row.task_id, row.seq, error)
        return
    mine.update(attempts=attempts, last_error=error, lease_owner="", lease_expires_at=None,
                next_attempt_at=now + timedelta(seconds=delays[attempts - 1]))


async def deliver_row(row_id: int, worker_id: str) -> bool:
    """Send one leased row once; True when the client acknowledged it."""
    found = await sync_to_async(_claimed)(row_id, worker_id)
    if found is None:
        return False
    row, secret = found
    try:
        status_code = await _post(row.url, bytes(row.body), secret, task_id=row.task_id, status=row.status,
                                  delivery=f"{row.task_id}:{row.seq}")
    except Refused as exc:
        await sync_to_async(_finish)(row, worker_id, "refused", str(exc))
        return False
    except (httpx.HTTPError, TimeoutError) as exc:
        await sync_to_async(_finish)(row, worker_id, "retry", type(exc).__name__)
        return False
    if 200 <= status_code < 300:
        await sync_to_async(_finish)(row, worker_id, "delivered")
        return True
    await sync_to_async(_finish)(row, worker_id, "retry", f"HTTP {status_code}")
    return False


async def deliver_due(worker_id: str = WORKER_ID, task_id: str | None = None) -> int:
    """Deliver what is due, task by task in order; the number acknowledged."""
    delivered = 0
    while True:
        ids = await sync_to_async(claim_due)(worker_id, BATCH, task_id)
        if not ids:
            return delivered
        results = await asyncio.gather(*(deliver_row(row_id, worker_id) for row_id in ids))
        delivered += sum(results)
        if not any(results):
            return delivered  # what is left waits for its retry time


async def deliver(url: str, body: bytes, secret: str, *, task_id: str, status: str) -> bool:
    """Send one body with retries, outside the outbox (a direct check of a URL)."""
    for attempt, delay in enumerate([0.0, *video_settings.webhook_delays()], start=1):
        if delay:
            await asyncio.sleep(delay)
        try:
            status_code = await _post(url, body, secret, task_id=task_id, status=status, delivery=task_id)
        except Refused as exc:
            logger.warning("webhook for %s refused: %s", task_id, exc)
            return False
        except (httpx.HTTPError, TimeoutError) as exc:
            logger.info("webhook for %s attempt %d failed: %s", task_id, attempt, type(exc).__name__)
            continue
        if 200 <= status_code < 300:
            return True
    return False


async def _post(url: str, body: bytes, secret: str, *, task_id: str, status: str, delivery: str) -> int:
    headers = {
        "Content-Type": "application/json", SIGNATURE_HEADER: webhook_signature(secret, body),
        "X-Studio-Task-Id": task_id, "X-Studio-Task-Status": status, "X-Studio-Delivery": delivery,
        "User-Agent": "studio-gateway-webhooks/1",
    }
    try:
        return await post_public(url, body, headers, field="callback_url", timeout=TIMEOUT)
    except BadRequest as exc:
        raise Refused(exc.message) from None


def _waiting() -> bool:
    return WebhookDelivery.objects.filter(_undelivered()).exists()


async def drain(timeout: float = 60.0) -> None:
    """Wait until every queued delivery is acknowledged or given up (tests, shutdown)."""
    deadline = time.monotonic() + timeout
    while _pending:
        await asyncio.gather(*list(_pending), return_exceptions=True)
    while time.monotonic() < deadline and await sync_to_async(_waiting)():
        await deliver_due(WORKER_ID)
        await asyncio.sleep(0.02)
