"""Leases: units of a shared counter a process has taken ahead and hands out itself.

Without them every admission under a limit or budget waits for a script run in Redis before its
call may go upstream. With them, an admitted check also takes up to ``CALLS`` more calls' worth
of its counter, in whole calls and never more than a ``SHARE``-th of the room left (so a
counter with less than ``SHARE`` calls of room is leased nothing and stays exact), and the
process admits the next calls against what it holds, without a round trip, until the lease is
used up or ``seconds`` old (``STUDIO_COUNTER_LEASE_SECONDS``, 1 by default); the settlement of a
call (what it used against what it reserved) goes to the lease too. A lease's unused units are
still counted in Redis: an admission that cannot be served from the leases folds what they hold of
its counters into its own script run (so a process never refuses itself for units it holds), and
what is left when a lease ends is given back (``flush`` gives back everything: shutdown, tests).

The price is the precision between processes: units one process holds are not there for the
others until given back, at most a ``SHARE``-th of the room per process (rpm 1,000: a lease of at
most 15 calls at the start of a minute, none once fewer than 64 calls are left). Headers served
from a lease count the other processes' calls as of the last round trip. A process killed
outright loses what it held: counted until its window ends (a budget's: until its period ends).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass

from studio.gateway.counter_types import EACH, Check

# Calls' worth a lease takes at most. When a lease is used up, the calls that arrive before the
# next one is back wait for it: with 16 calls in flight and leases of 64, a quarter of all calls
# waited for a round trip (production preset, buffered chat: 256 cut its CPU by about 3%). Under
# a limit of less than ``CALLS * SHARE`` calls the share is the bound, as before.
CALLS = 256
SHARE = 64  # a lease takes at most this share of the room left
SECONDS = 1.0  # how long a lease serves before its rest is given back (a book's own, by default)


@dataclass(slots=True)
class Lease:
    value: int  # the counter as this process knows it, without what it holds
    # ``value`` plus the units held (counted in Redis, not yet handed out): handing units out
    # and settling move ``value`` alone, so the held units are ``top - value`` (``left``).
    top: int
    previous: int  # the previous window's counter, as of the round trip
    limit: int
    ttl: int
    until: float  # monotonic

    @property
    def left(self) -> int:
        return self.top - self.value


@dataclass(slots=True)
class Bundle:
    """The leases of the counters a call's terms name together, in order."""

    leases: tuple[Lease, ...]
    until: float  # the first of them to end (a lease that changes drops every bundle)
    # Their previous windows' counters (set only as a lease changes, which drops the bundle).
    previous: tuple[int, ...]
    limits: Sequence[int] | None = None  # the limits last found to be theirs (compared by identity)


class Book:
    """The leases of one process (one event loop): handed out, folded and given back."""

    def __init__(self, seconds: float = SECONDS) -> None:
        self.seconds = seconds  # how long a lease serves before its rest is given back
        self.held: dict[str, Lease] = {}
        # The leases of the counters a call's terms name together (its checks' keys, or its
        # settlement's), found once: a call served from them looks up no key. Dropped whenever a
        # lease ends, starts or changes, so a bundle never holds a lease that is no longer ``held``,
        # nor an end or limits that are no longer its leases'.
        self.bundles: dict[tuple[str, ...], Bundle] = {}
        # Counters with a lease request on its way, and what its answer sets (calls that find
        # no lease for such a counter wait for it rather than each making a round trip).
        self.asking: dict[str, asyncio.Future[None]] = {}

    def coming(self, keys: list[str]) -> asyncio.Future[None] | None:
        """The answer a lease of one of ``keys`` is coming with, if one is on its way."""
        asking = self.asking
        if asking:
            for key in keys:
                found = asking.get(key)
                if found is not None:
                    return found
        return None

    def ask(self, key: str, answer: asyncio.Future[None]) -> bool:
        """Note that a lease of ``key`` is asked for (False: one already is)."""
        if key in self.asking:
            return False
        self.asking[key] = answer
        return True

    def answered(self, keys: list[str], answer: asyncio.Future[None]) -> None:
        for key in keys:
            if self.asking.get(key) is answer:
                del self.asking[key]
        if not answer.done():
            answer.set_result(None)

    def bundle(self, keys: tuple[str, ...]) -> Bundle | None:
        """The leases of ``keys``, or None unless each one is held."""
        found = self.bundles.get(keys)
        if found is None:
            held = self.held
            try:
                leases = tuple([held[key] for key in keys])
            except KeyError:
                return None
            if len(self.bundles) >= 1024:
                self.bundles.clear()
            found = self.bundles[keys] = Bundle(leases, min([lease.until for lease in leases], default=0.0),
                                                tuple([lease.previous for lease in leases]))
        return found

    def serve(self, checks: Sequence[Check]) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """Hand out each check's ``add`` from what is held: the counters' values and their
        previous windows', or None (and nothing taken) unless every one can be served."""
        return self.take(tuple([c.key for c in checks]), [c.limit for c in checks], [c.add for c in checks])

    def take(self, keys: tuple[str, ...], limits: Sequence[int], amounts: Sequence[int],
             kinds: Sequence[int] = EACH) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """``serve`` of the checks of ``keys`` (each under its limit in ``limits``) without the
        checks themselves (a call served here needs none): the counter of ``keys[i]`` adds
        ``amounts[kinds[i]]`` (a call's terms name the few amounts its checks add, one request,
        its tokens or its reserve, and which one each check adds, once)."""
        found = self.bundles.get(keys) or self.bundle(keys)
        if found is None or found.until <= time.monotonic():
            return None
        leases = found.leases
        if found.limits is not limits:  # the calls of one shape pass the same limits
            for lease, limit in zip(leases, limits, strict=True):
                if lease.limit != limit:
                    return None
            found.limits = limits
        values = _advanced(leases, amounts, kinds)
        return None if values is None else (values, found.previous)

    def settle(self, keys: tuple[str, ...], deltas: Sequence[int],
               kinds: Sequence[int] = EACH) -> tuple[int, ...] | None:
        """Settle ``deltas`` to the counters of ``keys`` (``keys[i]`` by ``deltas[kinds[i]]``)
        against what is held: a call that used less than it reserved hands the rest back to the
        lease, one that used more takes it from the lease. The counters' values, or None (and
        nothing changed) unless every one is held."""
        found = self.bundles.get(keys) or self.bundle(keys)
        if found is None or found.until <= time.monotonic():
            return None
        return _advanced(found.leases, deltas, kinds)

    def fold(self, keys: list[str]) -> list[Lease | None]:
        """Take back the leases of ``keys`` for a script run (their units go into it)."""
        held = self.held
        self.bundles.clear()
        return [held.pop(key, None) for key in keys]

    def unfold(self, keys: list[str], folded: list[Lease | None]) -> None:
        """The script run that took ``folded`` did not happen (refused or failed): hold them again."""
        for key, lease in zip(keys, folded, strict=True):
            if lease is not None:
                self.add(key, lease.left, lease.value, lease.previous, lease.limit, lease.ttl)

    def add(self, key: str, units: int, value: int, previous: int, limit: int, ttl: int) -> None:
        """Hold ``units`` more of ``key`` (``value``: the counter as the round trip found it,
        without what is held)."""
        lease = self.held.get(key)
        until = time.monotonic() + self.seconds
        if lease is None:
            self.held[key] = Lease(value, value + units, previous, limit, ttl, until)
            self.bundles.clear()
            return
        held = lease.left + units
        lease.value = max(lease.value, value)
        lease.top, lease.previous = lease.value + held, previous
        lease.limit, lease.until = limit, max(lease.until, until)
        self.bundles.clear()  # their first end and limits may have changed

    def without(self, keys: list[str], values: tuple[int, ...]) -> tuple[int, ...]:
        """Counter values from Redis without the units held here (still counted there)."""
        held = self.held
        return tuple(v - held[k].left if k in held else v for k, v in zip(keys, values, strict=False))

    def ended(self, everything: bool = False) -> list[tuple[str, int, int]]:
        """Drop the leases past their time (or all): ``(key, -units, ttl)`` to give back."""
        now = time.monotonic()
        done = [key for key, lease in self.held.items() if everything or lease.until <= now]
        if done:
            self.bundles.clear()
        out = []
        for key in done:
            lease = self.held.pop(key)
            if lease.left:
                out.append((key, -lease.left, lease.ttl))
        return out


def _advanced(leases: tuple[Lease, ...], amounts: Sequence[int], kinds: Sequence[int]) -> tuple[int, ...] | None:
    """Move the value of ``leases[i]`` by ``amounts[kinds[i]]``, unless one would pass its top
    (then none moves): the new values. Each lease moves as it is checked, and the ones already
    moved go back when a later one has no room (rare: the call then goes to Redis, which renews
    the leases). Every admission and settlement under limits runs this loop: it is kept to the
    few steps each lease needs (``kinds`` is as long as ``leases``, or ``EACH``)."""
    values = []
    for lease, kind in zip(leases, kinds, strict=False):
        value = lease.value + amounts[kind]
        if value > lease.top:
            for moved, back in zip(leases[:len(values)], kinds, strict=False):
                moved.value -= amounts[back]
            return None
        lease.value = value
        values.append(value)
    return tuple(values)
