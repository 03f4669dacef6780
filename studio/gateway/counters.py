"""Shared counters for limits and budgets: atomic Lua scripts in Redis, or process memory.

With ``REDIS_URL`` every process shares the counters; without it they live in this process (one
process is then the deployment). A check-and-add over several counters is atomic: all are added
or none. In Redis, the operations a process queues while its previous script run is on the wire
travel together in the next run (one pre-loaded script, ``EVALSHA``, executing them in order),
so under load one round trip serves many requests' admissions and settlements alike, and each
check still sees every addition made before it, by any process.

The Redis implementation (its batch script, leases and Cluster layout) is ``redis_counters``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
import weakref
from collections.abc import Sequence

from django.conf import settings

from studio.core.hot_settings import hot
from studio.gateway.counter_types import Check, Counters, Done, Outcome
from studio.gateway.redis_counters import RedisCounters

logger = logging.getLogger(__name__)


class MemoryCounters:
    """The same semantics in one process (a lock makes each call atomic across threads)."""

    def __init__(self) -> None:
        self.values: dict[str, tuple[int, float]] = {}  # key → (value, expires at; 0: never)
        self.slots: dict[str, dict[str, float]] = {}
        self.lock = threading.Lock()

    def _get(self, key: str, now: float) -> int | None:
        found = self.values.get(key)
        if found is None:
            return None
        if found[1] and found[1] <= now:
            del self.values[key]
            return None
        return found[0]

    def _set(self, key: str, value: int, ttl: int, now: float) -> None:
        old = self.values.get(key)
        expires = old[1] if old is not None else (now + ttl if ttl > 0 else 0.0)
        self.values[key] = (value, expires)

    async def apply(self, checks: Sequence[Check]) -> Outcome:
        now = time.time()
        with self.lock:
            values, previous, refused = [], [], -1
            for i, c in enumerate(checks):
                value = self._get(c.key, now)
                values.append(c.base if value is None else value)
                seen = values[i]
                if c.previous:
                    previous.append(max(self._get(c.previous, now) or 0, 0))
                    seen += math.floor(previous[i] * c.weight)
                else:
                    previous.append(0)
                if refused < 0 and c.limit >= 0 and seen + c.need > c.limit:
                    refused = i
            if refused < 0:
                for i, c in enumerate(checks):
                    values[i] += c.add
                    self._set(c.key, values[i], c.ttl, now)
            return Outcome(refused, tuple(values), tuple(previous))

    def take(self, keys: tuple[str, ...], limits: Sequence[int],
             adds: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        return None  # nothing is held ahead: every check is applied

    def add_held(self, keys: tuple[str, ...], deltas: Sequence[int]) -> tuple[int, ...] | None:
        return None

    async def add(self, changes: Sequence[tuple[str, int, int]]) -> tuple[int, ...]:
        return self._add(changes)

    def _add(self, changes: Sequence[tuple[str, int, int]]) -> tuple[int, ...]:
        now = time.time()
        with self.lock:
            out = []
            for key, delta, ttl in changes:
                value = (self._get(key, now) or 0) + delta
                self._set(key, value, ttl, now)
                out.append(value)
            return tuple(out)

    def add_later(self, changes: Sequence[tuple[str, int, int]], then: Done | None = None) -> None:
        values = self._add(changes)
        if then is not None:
            then(values)

    async def flush(self) -> None:
        return None

    async def once(self, key: str, ttl: int) -> bool:
        now = time.time()
        with self.lock:
            if self._get(key, now) is not None:
                return False
            self._set(key, 1, max(ttl, 1), now)
            return True

    async def take_slot(self, key: str, member: str, limit: int, until: float) -> tuple[bool, int]:
        now = time.time()
        with self.lock:
            held = {m: t for m, t in self.slots.get(key, {}).items() if t > now}
            self.slots[key] = held
            if member in held:
                return True, len(held)
            if 0 <= limit <= len(held):
                return False, len(held)
            held[member] = until
            return True, len(held)

    async def free_slot(self, key: str, member: str) -> None:
        with self.lock:
            self.slots.get(key, {}).pop(member, None)


_memory = MemoryCounters()
_redis: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, RedisCounters] = weakref.WeakKeyDictionary()


# The event loop of the last ``get`` and its client, replaced whole (a thread sees the one or
# the other pair).
_last: tuple = (None, None)


def get() -> Counters:
    """This process's counters: Redis (one client per event loop) when configured, else memory."""
    if not hot.REDIS_URL:  # a plain attribute: Django's lazy settings cost more than the rest of this
        return _memory
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


def reset_memory() -> None:
    """Forget every in-memory counter (tests)."""
    global _memory
    _memory = MemoryCounters()
