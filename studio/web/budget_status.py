"""Budget left and budget alerts for the studio's header (a context processor).

For a signed-in person: every enabled budget on them, their keys or their teams; the header
shows the one with the least left this period, and a banner names each alert raised this period.
Read lazily, so pages that do not render the header pay nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from django.db.models import Q, Sum
from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from studio.gateway import budgets as budget_periods
from studio.models import Budget, BudgetAlert, Membership, UsageRecord


@dataclass(frozen=True)
class BudgetLeft:
    label: str
    period: str
    limit: Decimal
    spent: Decimal

    @property
    def left(self) -> Decimal:
        return max(self.limit - self.spent, Decimal(0))

    @property
    def low(self) -> bool:
        return self.limit == 0 or self.left / self.limit < Decimal("0.2")


@dataclass(frozen=True)
class Status:
    tightest: BudgetLeft | None
    alerts: list[BudgetAlert]


def _start(period: str, now: float) -> datetime | None:
    start, _ = budget_periods.window(period, now)
    return datetime.fromtimestamp(start, UTC) if start else None


def status_for(user) -> Status:
    teams = Membership.objects.filter(user=user).values("team_id")
    found = list(Budget.objects.filter(enabled=True).filter(
        Q(user=user) | Q(api_key__owner=user, api_key__revoked=False) | Q(team_id__in=teams))
        .select_related("api_key", "user", "team"))
    now = time.time()
    tightest: BudgetLeft | None = None
    alerts: list[BudgetAlert] = []
    for budget in found:
        start = _start(budget.period, now)
        rows = UsageRecord.objects.filter(**{{"key": "api_key_id", "user": "user_id", "team": "team_id"}[budget.scope]:
                                             budget.api_key_id or budget.user_id or budget.team_id})
        if start is not None:
            rows = rows.filter(created__gte=start)
        spent = rows.aggregate(total=Sum("cost_usd"))["total"] or Decimal(0)
        entry = BudgetLeft(budget.scope_label, budget.period, budget.limit_usd, spent)
        if tightest is None or entry.left < tightest.left:
            tightest = entry
        window = start or datetime.fromtimestamp(0, UTC)
        alerts += list(BudgetAlert.objects.filter(budget=budget, window_start=window).select_related("budget"))
    return Status(tightest, alerts)


def budget_status(request: HttpRequest) -> dict[str, object]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"budget_status": SimpleLazyObject(lambda: status_for(user))}
