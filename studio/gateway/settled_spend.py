"""What a budget's period has spent so far, by the usage records: its counter's starting value.

The snapshot is reloaded every few seconds in every process, and each load needs, for every
budget, the sum of the usage records of its current period (a month of a busy key's records, for
a monthly budget). Summing that whole period on every load grows with the period's traffic, so
the sum is kept in two parts: the records older than a cut (``SETTLED_AFTER`` seconds ago at
least, on a ``SETTLED_STEP`` grid), summed once per cut and remembered, and the records since the
cut, summed on every load. A record's time is set as it is written, in the transaction that
writes it, so no record older than the cut appears after it was summed. Any change to the
gateway's rows (``snapshot.invalidate``) forgets the remembered parts.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

SETTLED_AFTER = 300  # seconds; far longer than any transaction writing usage records
SETTLED_STEP = 600  # how often the remembered part is summed again

# budget id → ((scope field, target, period start, cut), what the records before the cut spent)
_settled: dict[int, tuple[tuple[str, int | None, float, float], Decimal]] = {}


def _moment(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def spent(budget_id: int, field: str, target: int | None, start: float, now: float) -> Decimal:
    """What the records of ``field`` = ``target`` since ``start`` (0: ever) cost, in dollars."""
    from django.db.models import Sum

    from studio.models import UsageRecord

    rows = UsageRecord.objects.filter(**{field: target})
    period = rows.filter(created__gte=_moment(start)) if start else rows
    cut = (now - SETTLED_AFTER) // SETTLED_STEP * SETTLED_STEP
    if cut <= start:  # the period is young: its records are few
        return period.aggregate(total=Sum("cost_usd"))["total"] or Decimal(0)
    where = (field, target, start, cut)
    known = _settled.get(budget_id)
    if known is None or known[0] != where:
        before = period.filter(created__lt=_moment(cut)).aggregate(total=Sum("cost_usd"))["total"] or Decimal(0)
        known = _settled[budget_id] = (where, before)
    # One bound only (the cut is inside the period): with two, a database may take the index
    # range from the period's start and filter the whole period's records by the cut.
    since = rows.filter(created__gte=_moment(cut)).aggregate(total=Sum("cost_usd"))["total"] or Decimal(0)
    return known[1] + since


def forget() -> None:
    """Sum every period whole again at the next load (the gateway's rows changed)."""
    _settled.clear()
