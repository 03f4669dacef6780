"""The counters in this process's memory: the embedded default, where one process is the deployment.

The same semantics as ``redis_counters``, leases included: an admitted check also takes up to
``leases.CALLS`` more calls' worth of its counter (never more than a ``leases.SHARE``-th of the
room left), and the next calls of the same counters are admitted from what is held, without
building their checks or weighing the previous minute again. Held units are counted here: any
other check of their counters (another key under the same team budget, say) folds them into its
own, and what is left when a lease ends is given back on the next operation, or by ``flush``.

A lock makes every operation atomic across the threads of the process; each event loop's calls
hold it only for the few steps of their own operation.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence

from studio.gateway import leases
from studio.gateway.counter_types import EACH, Check, Done, Outcome


class MemoryCounters:
    def __init__(self, lease_seconds: float = leases.SECONDS) -> None:
        self.values: dict[str, tuple[int, float]] = {}  # key → (value, expires at; 0: never)
        self.slots: dict[str, dict[str, float]] = {}
        self.lock = threading.Lock()
        self.book = leases.Book(lease_seconds)

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

    def _change(self, changes: Sequence[tuple[str, int, int]], now: float) -> tuple[int, ...]:
        out = []
        for key, delta, ttl in changes:
            value = (self._get(key, now) or 0) + delta
            self._set(key, value, ttl, now)
            out.append(value)
        return tuple(out)

    def take(self, keys: tuple[str, ...], limits: Sequence[int], amounts: Sequence[int],
             kinds: Sequence[int] = EACH) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        book = self.book
        if not book.held:
            return None
        with self.lock:
            return book.take(keys, limits, amounts, kinds)

    def add_held(self, keys: tuple[str, ...], deltas: Sequence[int],
                 kinds: Sequence[int] = EACH) -> tuple[int, ...] | None:
        book = self.book
        if not book.held:
            return None
        with self.lock:
            return book.settle(keys, deltas, kinds)

    async def apply(self, checks: Sequence[Check]) -> Outcome:
        return self.check(checks)

    def check(self, checks: Sequence[Check]) -> Outcome:
        """Check and add ``checks`` (all or none), taking leases of the counters with room."""
        now = time.time()
        book = self.book
        with self.lock:
            if book.held:
                served = book.serve(checks)
                if served is not None:
                    return Outcome(-1, *served)
                self._change(book.ended(), now)
            keys = [c.key for c in checks]
            folded = book.fold(keys)
            # Each counter without the units this process held of it (they go into this check, as
            # the Redis script takes them), and what a check of it sees: that plus the previous
            # minute's share.
            stored, seen, previous, refused = [], [], [], -1
            for i, (c, lease) in enumerate(zip(checks, folded, strict=True)):
                value = self._get(c.key, now)
                value = (c.base if value is None else value) - (lease.left if lease is not None else 0)
                stored.append(value)
                if c.previous:
                    prev = self._get(c.previous, now) or 0
                    before = book.held.get(c.previous)
                    prev = max(prev - (before.left if before is not None else 0), 0)
                    previous.append(prev)
                    value += math.floor(prev * c.weight)
                else:
                    previous.append(0)
                seen.append(value)
                if refused < 0 and c.limit >= 0 and value + c.need > c.limit:
                    refused = i
            if refused >= 0:
                book.unfold(keys, folded)
                return Outcome(refused, tuple(stored), tuple(previous))
            for c, value, count, prev in zip(checks, stored, seen, previous, strict=True):
                taken = 0
                if c.add > 0:
                    calls = leases.CALLS
                    if c.limit >= 0:
                        calls = min(calls, (c.limit - count - c.need) // (leases.SHARE * c.add))
                    if calls > 0:
                        taken = calls * c.add
                self._set(c.key, value + c.add + taken, c.ttl, now)
                if taken:
                    book.add(c.key, taken, value + c.add, prev, c.limit, c.ttl)
            return Outcome(-1, tuple(v + c.add for v, c in zip(stored, checks, strict=True)), tuple(previous))

    async def add(self, changes: Sequence[tuple[str, int, int]]) -> tuple[int, ...]:
        return self._add(changes)

    def _add(self, changes: Sequence[tuple[str, int, int]]) -> tuple[int, ...]:
        """``changes`` applied; the new values without the units this process holds."""
        now = time.time()
        with self.lock:
            book = self.book
            if book.held:
                self._change(book.ended(), now)
            values = self._change(changes, now)
            return book.without([key for key, _, _ in changes], values) if book.held else values

    def add_later(self, changes: Sequence[tuple[str, int, int]], then: Done | None = None) -> None:
        if self.book.held:
            settled = self.add_held(tuple([key for key, _, _ in changes]), [delta for _, delta, _ in changes])
            if settled is not None:
                if then is not None:
                    then(settled)
                return
        values = self._add(changes)
        if then is not None:
            then(values)

    async def flush(self) -> None:
        """Give back everything the leases hold (tests, shutdown)."""
        with self.lock:
            self._change(self.book.ended(everything=True), time.time())

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
