"""Shared counters for limits and budgets: atomic Lua scripts in Redis, or process memory.

With ``REDIS_URL`` every process shares the counters; without it they live in this process (one
process is then the deployment). A check-and-add over several counters is atomic: all are added
or none. In Redis, the operations a process queues while its previous script run is on the wire
travel together in the next run (one pre-loaded script, ``EVALSHA``, executing them in order),
so under load one round trip serves many requests' admissions and settlements alike, and each
check still sees every addition made before it, by any process.

The Redis implementation (its batch script, leases and Cluster layout) is ``redis_counters``; the
one in memory, with the same leases, is ``memory_counters``.
"""

from __future__ import annotations

import asyncio
import logging
import weakref

from django.conf import settings

from studio.core.hot_settings import hot
from studio.gateway.counter_types import Counters
from studio.gateway.memory_counters import MemoryCounters
from studio.gateway.redis_counters import RedisCounters

logger = logging.getLogger(__name__)


_memory: MemoryCounters | None = None  # made on first use, with the settings' lease time
_redis: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, RedisCounters] = weakref.WeakKeyDictionary()


# The event loop of the last ``get`` and its client, replaced whole (a thread sees the one or
# the other pair).
_last: tuple = (None, None)


def get() -> Counters:
    """This process's counters: Redis (one client per event loop) when configured, else memory."""
    if not hot.REDIS_URL:  # a plain attribute: Django's lazy settings cost more than the rest of this
        return _memory or reset_memory()
    global _last
    loop = asyncio.get_running_loop()
    last = _last
    if last[0] is loop:
        return last[1]
    found = _redis.get(loop)
    if found is None:
        found = _redis[loop] = RedisCounters(settings.REDIS_URL, settings.STUDIO_COUNTER_PREFIX)
    _last = (loop, found)
    return found


def reset_memory() -> MemoryCounters:
    """Forget every in-memory counter (tests); the new store."""
    global _memory
    _memory = MemoryCounters(settings.STUDIO_COUNTER_LEASE_SECONDS)
    return _memory
