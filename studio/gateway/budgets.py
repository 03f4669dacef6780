"""Budgets: which apply to a call, their periods, their counters, and the alerts they raise.

A budget's spend for the current period lives in a counter (nano-dollars) named after the
period's start, so a new period starts from zero by itself. A call reserves its estimated cost
against every budget of its key, user and team at once (all or none), then settles the real
cost; at most the reservations of calls in flight can overshoot a limit.
"""

from __future__ import annotations

import calendar
import functools
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from studio.core.entries import BudgetEntry, Snapshot
from studio.core.errors import QuotaExceeded
from studio.core.principal import Principal
from studio.gateway.cost import display, from_nano
from studio.gateway.counter_types import Check

DAY = 86400


def window(period: str, now: float) -> tuple[float, float | None]:
    """(start, end) of the period containing ``now`` (UTC, epoch seconds); a total has no end."""
    if period == "total":
        return 0.0, None
    return _window_of_day(period, int(now // DAY))


@functools.lru_cache(maxsize=64)
def _window_of_day(period: str, day: int) -> tuple[float, float]:
    """The window of every moment of one UTC day (worked out once per day, not per call)."""
    midnight = datetime.fromtimestamp(day * DAY, UTC)
    if period == "day":
        start, end = midnight, midnight + timedelta(days=1)
    elif period == "week":
        start = midnight - timedelta(days=midnight.weekday())
        end = start + timedelta(days=7)
    else:
        start = midnight.replace(day=1)
        days = calendar.monthrange(start.year, start.month)[1]
        end = start + timedelta(days=days)
    return start.timestamp(), end.timestamp()


def applicable(snap: Snapshot, principal: Principal) -> list[BudgetEntry]:
    found: list[BudgetEntry] = []
    if principal.key_id is not None:
        found += snap.budgets.get(("key", principal.key_id), ())
    found += snap.budgets.get(("user", principal.user_id), ())
    if principal.team_id is not None:
        found += snap.budgets.get(("team", principal.team_id), ())
    return found


def counter_key(budget: BudgetEntry, start: float) -> str:
    return f"b:{budget.id}:{int(start)}"


def ttl_of(end: float | None, now: float) -> int:
    return 0 if end is None else int(end - now) + DAY


@dataclass(frozen=True, slots=True)
class Hold:
    """One budget's share of a reservation: the counter it went to."""

    budget: BudgetEntry
    key: str
    window_start: float
    ttl: int
    soft: int  # the soft alert's threshold times 100 (a counter at ``value * 100 >= soft`` is past it)


@functools.lru_cache(maxsize=4096)
def hold_of(budget: BudgetEntry, day: int) -> tuple[Hold, int]:
    """A budget's counter on one UTC day and its base (worked out once a day per budget, not per
    call); the counter outlives its period by at least a day."""
    start, end = window(budget.period, day * DAY)
    return (Hold(budget, counter_key(budget, start), start, ttl_of(end, day * DAY),
                 budget.limit_nano * budget.soft_percent),
            budget.base_nano if budget.base_window == start else 0)


# The last ``hold_of`` lookups: a principal's budgets are the same objects until the snapshot
# changes, which the comparison finds by identity first (the cache's own lookup hashes every
# field of each budget); holding them keeps them the same objects.
_last: tuple = (None, ())  # (key, holds), replaced whole: a thread sees the one or the other


def checks(entries: list[BudgetEntry], reserve_nano: int, now: float) -> tuple[list[Check], list[Hold]]:
    day, need = int(now // DAY), max(reserve_nano, 1)
    global _last
    found = (day, *entries)
    last = _last
    if last[0] == found:
        held = last[1]
    else:
        held = tuple(hold_of(budget, day) for budget in entries)
        _last = (found, held)
    return ([Check(hold.key, hold.budget.limit_nano, need, reserve_nano, hold.ttl, base) for hold, base in held],
            [hold for hold, _ in held])


def refusal(budget: BudgetEntry, now: float) -> QuotaExceeded:
    _, end = window(budget.period, now)
    resets = datetime.fromtimestamp(end, UTC).isoformat().replace("+00:00", "Z") if end else None
    when = f"it resets at {resets}" if resets else "it does not reset (a total budget)"
    limit = display(from_nano(budget.limit_nano))
    return QuotaExceeded(
        f"budget exceeded: {budget.label} has spent its ${limit} per {budget.period}; {when}",
        code="insufficient_quota", retry_after=(end - now) if end else None,
        details={"budget": budget.label, "budget_id": budget.id, "period": budget.period, "resets_at": resets},
    )


def soft_crossed(budget: BudgetEntry, before: int, after: int) -> bool:
    threshold = budget.limit_nano * budget.soft_percent // 100
    return before < threshold <= after
