"""Relaying task status changes to a client's ``callback_url`` as signed webhooks.

The body is the task record in the client's protocol; ``X-Studio-Signature`` carries
``sha256=<HMAC-SHA256 of the body>`` keyed with the API key's webhook secret. Delivery retries
with backoff. The client's URL gets the same SSRF rules as any client-supplied URL: http(s) only,
every resolved address public, the connection pinned to the checked address, no redirects.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import orjson

from . import video_settings
from .errors import BadRequest
from .safe_fetch import _allow_private, _PinnedBackend, _PinnedTransport, _prepare_hop
from .video_signing import webhook_secret, webhook_signature

logger = logging.getLogger(__name__)
TIMEOUT = 10.0
SIGNATURE_HEADER = "X-Studio-Signature"
_pending: set[asyncio.Task] = set()


_last: dict[str, asyncio.Task] = {}


def relay(task: Any, record: dict[str, Any]) -> None:
    """Deliver in the background; the caller (a poll, a callback, a create) never waits on the client.

    Deliveries of one task are chained, so the client sees its changes in order even when an
    earlier one is being retried.
    """
    body = orjson.dumps(record)
    secret = webhook_secret(task.api_key_id, task.user_id)
    previous = _last.get(task.id)
    url, task_id, status = task.client_callback_url, task.id, task.status  # the row object changes later

    async def run() -> bool:
        if previous is not None and not previous.done():
            await asyncio.gather(previous, return_exceptions=True)
        return await deliver(url, body, secret, task_id=task_id, status=status)

    job = asyncio.get_running_loop().create_task(run())
    _last[task.id] = job
    _pending.add(job)
    job.add_done_callback(_pending.discard)
    job.add_done_callback(lambda done, task_id=task.id: _last.pop(task_id, None) if _last.get(task_id) is done
                          else None)


async def deliver(url: str, body: bytes, secret: str, *, task_id: str, status: str) -> bool:
    headers = {
        "Content-Type": "application/json", SIGNATURE_HEADER: webhook_signature(secret, body),
        "X-Studio-Task-Id": task_id, "X-Studio-Task-Status": status, "User-Agent": "studio-gateway-webhooks/1",
    }
    delays = [0.0, *video_settings.webhook_delays()]
    for attempt, delay in enumerate(delays, start=1):
        if delay:
            await asyncio.sleep(delay)
        try:
            status_code = await post_public(url, body, headers)
        except BadRequest as exc:  # refused by the SSRF rules: retrying cannot help
            logger.warning("webhook for %s refused: %s", task_id, exc.message)
            return False
        except (httpx.HTTPError, TimeoutError) as exc:
            logger.info("webhook for %s attempt %d failed: %s", task_id, attempt, type(exc).__name__)
            continue
        if 200 <= status_code < 300:
            return True
        logger.info("webhook for %s attempt %d answered HTTP %d", task_id, attempt, status_code)
    return False


async def post_public(url: str, body: bytes, headers: dict[str, str]) -> int:
    field = "callback_url"
    backend = _PinnedBackend(field)
    async with asyncio.timeout(TIMEOUT), httpx.AsyncClient(
        transport=_PinnedTransport(backend), timeout=TIMEOUT, follow_redirects=False, trust_env=False,
    ) as client:
        target = await _prepare_hop(url, field=field, allow_private=_allow_private(None), backend=backend)
        response = await client.post(target, content=body, headers=headers)
        return response.status_code


async def drain() -> None:
    """Wait for deliveries in flight (tests, shutdown)."""
    while _pending:
        await asyncio.gather(*list(_pending), return_exceptions=True)
