"""What the shared counters take and answer, whichever store keeps them (``counters``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(slots=True)
class Check:
    """Refuse when ``value + need > limit`` (``limit`` < 0: never); otherwise add ``add``.
    A counter that does not exist starts at ``base`` and expires after ``ttl`` seconds (0: never).

    With ``previous`` (a sliding window) ``value`` also counts the ``previous`` counter times
    ``weight``, the share of the previous window still inside the sliding one (rounded down, as
    the ``limits`` library's sliding-window counter does); only ``key`` is added to.

    Not changed once made (yet not frozen: one is built for every call, and frozen costs more)."""

    key: str
    limit: int
    need: int
    add: int
    ttl: int
    base: int = 0
    previous: str = ""
    weight: float = 0.0


@dataclass(frozen=True, slots=True)
class Outcome:
    refused: int  # index of the first refused check, -1 when admitted
    values: tuple[int, ...]  # after the additions (or, when refused, as found)
    previous: tuple[int, ...] = ()  # each check's previous-window counter (0 without one)


Done = Callable[[tuple[int, ...] | None], None]

# ``kinds`` of a ``take`` or ``add_held`` whose counters each have an amount of their own.
EACH = range(1 << 16)


class Counters(Protocol):
    async def apply(self, checks: Sequence[Check]) -> Outcome: ...

    def take(self, keys: tuple[str, ...], limits: Sequence[int], amounts: Sequence[int],
             kinds: Sequence[int] = EACH) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """Admit from what this process holds, without a round trip: the counter of ``keys[i]``
        (under its limit ``limits[i]``) takes ``amounts[kinds[i]]``, as ``apply`` of the same
        checks would; the values and previous windows' values, or None (nothing taken: ``apply``
        the checks)."""

    def add_held(self, keys: tuple[str, ...], deltas: Sequence[int],
                 kinds: Sequence[int] = EACH) -> tuple[int, ...] | None:
        """``add_later`` of ``deltas`` (``keys[i]`` by ``deltas[kinds[i]]``) from what this
        process holds, without a round trip: the new values, or None (nothing changed:
        ``add_later`` them)."""

    async def add(self, changes: Sequence[tuple[str, int, int]]) -> tuple[int, ...]:
        """Add each ``(key, delta, ttl)``; the new values."""

    def add_later(self, changes: Sequence[tuple[str, int, int]], then: Done | None = None) -> None:
        """``add`` without waiting (call from the event loop): ``then`` gets the new values, or
        ``None`` when the counters could not be reached."""

    async def flush(self) -> None:
        """Wait until every operation queued so far is done."""

    async def once(self, key: str, ttl: int) -> bool:
        """True the first time ``key`` is seen within ``ttl`` seconds."""

    async def take_slot(self, key: str, member: str, limit: int, until: float) -> tuple[bool, int]:
        """Hold one of ``limit`` slots for ``member`` until ``until`` (epoch) or ``free_slot``."""

    async def free_slot(self, key: str, member: str) -> None: ...
