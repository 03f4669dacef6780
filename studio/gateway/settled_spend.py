"""What a budget's period has spent so far, by the usage records: its counter's starting value.

The snapshot is reloaded every few seconds in every process, and each load needs, for every
budget, the sum of the usage records of its current period (a month of a busy key's records, for
a monthly budget). Summing the whole period on every load would cost in proportion to the
period's traffic, every few seconds, in every process. So the sum is kept in two parts:

- the records older than a cut (``SETTLED_AFTER`` seconds ago at least, on a ``REFRESH``-second
  grid): summed once, and then only the records of each step the cut moves on are added;
- the records since the cut: summed again at most once per ``REFRESH`` seconds (and whenever the
  cut moves), so a load in between reads no usage records at all.

A record's time is set as it is written, in the transaction that writes it, so no record older
than the cut appears after it was summed. The starting value only seeds a counter that Redis (or
this process) does not hold yet; a counter that exists goes on from its own value, so the last
``REFRESH`` seconds of records missing from a starting value matter only to a counter started in
that time. Any change to the gateway's rows (``snapshot.invalidate``) forgets the remembered
parts.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.db.models import QuerySet

SETTLED_AFTER = 300  # seconds; far longer than any transaction writing usage records
REFRESH = 60  # the cut's step, and how often the records since the cut are summed again


@dataclass(slots=True)
class _Part:
    where: tuple[str, int | None, float]  # scope field, target, period start
    cut: float
    before: Decimal  # what the period's records before the cut cost
    since: Decimal  # what the records since the cut cost, when last summed
    summed_at: float  # when ``since`` was summed


_parts: dict[int, _Part] = {}  # budget id → its remembered parts
_lock = threading.Lock()  # a load in another thread must not add the same step twice


def _moment(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def _total(queryset: QuerySet) -> Decimal:
    from django.db.models import Sum

    return queryset.aggregate(total=Sum("cost_usd"))["total"] or Decimal(0)


def spent(budget_id: int, field: str, target: int | None, start: float, now: float) -> Decimal:
    """What the records of ``field`` = ``target`` since ``start`` (0: ever) cost, in dollars."""
    from studio.models import UsageRecord

    rows = UsageRecord.objects.filter(**{field: target})
    cut = max((now - SETTLED_AFTER) // REFRESH * REFRESH, start)
    where = (field, target, start)
    with _lock:
        part = _parts.get(budget_id)
        if part is None or part.where != where or cut < part.cut:
            # A new budget, period or scope: the period's records before the cut, once.
            period = rows.filter(created__gte=_moment(start)) if start else rows
            before = _total(period.filter(created__lt=_moment(cut))) if cut > start else Decimal(0)
            part = _parts[budget_id] = _Part(where, cut, before, Decimal(0), float("-inf"))
        elif cut > part.cut:
            # The cut moved on: add the records of the step it moved, not the whole period again.
            part.before += _total(rows.filter(created__gte=_moment(part.cut), created__lt=_moment(cut)))
            part.cut, part.summed_at = cut, float("-inf")
        if now - part.summed_at >= REFRESH:
            # One bound only (the cut is inside the period): with two, a database may take the
            # index range from the period's start and filter the whole period's records by the cut.
            part.since = _total(rows.filter(created__gte=_moment(cut)))
            part.summed_at = now
        return part.before + part.since


def forget() -> None:
    """Sum every period whole again at the next load (the gateway's rows changed)."""
    with _lock:
        _parts.clear()
