"""The worker's heartbeat: every worker loop writes the time now and then; ``/readyz`` reads it.

It goes to the cache: Redis when ``REDIS_URL`` is set (any process sees any worker), else this
process's memory (enough for the in-process worker; a separate worker needs Redis to be seen).
"""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache

EVERY = 5.0  # seconds between beats (the worker's job schedule)


def _key() -> str:
    return f"{settings.STUDIO_REDIS_PREFIX}:worker-heartbeat"


async def beat() -> None:
    await cache.aset(_key(), time.time(), timeout=24 * 3600)


def age() -> float | None:
    """Seconds since the last beat of any worker, or None when none was ever seen."""
    last = cache.get(_key())
    return None if last is None else max(time.time() - float(last), 0.0)
