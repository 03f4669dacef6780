"""A budget's starting value: the usage records of its period, the old ones summed once per cut."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from studio.gateway import clock, settled_spend, snapshot
from studio.models import Budget, UsageRecord

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.fixture
def at_now(monkeypatch):
    monkeypatch.setattr(clock, "now", lambda: NOW.timestamp())


def used(account, cost: str, when: datetime) -> None:
    UsageRecord.objects.create(api_key=account.key, user=account.user, model_id="omicron-4-mini", route="chat",
                               status_code=200, cost_usd=Decimal(cost), created=when)


def base_of(budget: Budget) -> int:
    entries = snapshot.load_budgets()[("user", budget.user_id)]
    return next(e for e in entries if e.id == budget.id).base_nano


def sums(count_queries) -> list[str]:
    return [sql for sql in count_queries["sql"] if "SUM(" in sql and "studio_usagerecord" in sql]


def test_a_reload_counts_new_records_without_summing_the_old_ones_again(alice, at_now, count_queries):
    budget = Budget.objects.create(user=alice.user, limit_usd=Decimal(100), period="month")
    used(alice, "1.5", NOW - timedelta(days=10))
    used(alice, "0.25", NOW - timedelta(minutes=1))
    used(alice, "7", NOW - timedelta(days=40))  # last month: not this budget's
    assert base_of(budget) == 1_750_000_000

    used(alice, "2", NOW - timedelta(seconds=5))
    count_queries["sql"].clear()
    assert base_of(budget) == 3_750_000_000
    reload_sums = sums(count_queries)
    assert len(reload_sums) == 1 and '"created" <' not in reload_sums[0]  # the records since the cut only

    # A record older than the cut, appearing behind the gateway's back, is not read again...
    UsageRecord.objects.filter(cost_usd=Decimal("1.5")).update(cost_usd=Decimal("3.5"))
    assert base_of(budget) == 3_750_000_000
    # ...until a change to the gateway's rows makes every process start over.
    snapshot.invalidate()
    assert base_of(budget) == 5_750_000_000


def test_the_remembered_part_moves_on_with_the_cut(alice, at_now, monkeypatch):
    budget = Budget.objects.create(user=alice.user, limit_usd=Decimal(100), period="month")
    used(alice, "1", NOW - timedelta(minutes=20))
    assert base_of(budget) == 1_000_000_000
    used(alice, "2", NOW - timedelta(minutes=1))
    later = NOW + timedelta(seconds=2 * settled_spend.SETTLED_STEP)
    monkeypatch.setattr(clock, "now", lambda: later.timestamp())
    assert base_of(budget) == 3_000_000_000


def test_a_young_period_is_summed_whole_every_time(alice, monkeypatch, count_queries):
    early = datetime(2026, 11, 20, 0, 2, tzinfo=UTC)  # two minutes into the day
    monkeypatch.setattr(clock, "now", lambda: early.timestamp())
    budget = Budget.objects.create(user=alice.user, limit_usd=Decimal(10), period="day")
    used(alice, "0.5", early - timedelta(minutes=1))
    used(alice, "9", early - timedelta(minutes=5))  # yesterday
    count_queries["sql"].clear()
    assert base_of(budget) == 500_000_000
    assert len(sums(count_queries)) == 1
