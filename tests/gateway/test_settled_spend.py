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


def sum_params(count_queries) -> list[str]:
    """The parameters of each sum, as text (dates as the database was sent them)."""
    return [" ".join(map(str, params)) for sql, params in zip(count_queries["sql"], count_queries["params"], strict=True)
            if "SUM(" in sql and "studio_usagerecord" in sql]


def cleared(count_queries) -> None:
    count_queries["sql"].clear()
    count_queries["params"].clear()


def later(monkeypatch, seconds: float) -> None:
    moment = NOW + timedelta(seconds=seconds)
    monkeypatch.setattr(clock, "now", lambda: moment.timestamp())


def test_a_reload_reads_no_records_until_the_refresh_then_only_the_records_since_the_cut(
        alice, at_now, monkeypatch, count_queries):
    budget = Budget.objects.create(user=alice.user, limit_usd=Decimal(100), period="month")
    used(alice, "1.5", NOW - timedelta(days=10))
    used(alice, "0.25", NOW - timedelta(minutes=1))
    used(alice, "7", NOW - timedelta(days=40))  # last month: not this budget's
    assert base_of(budget) == 1_750_000_000

    used(alice, "2", NOW - timedelta(seconds=5))
    cleared(count_queries)
    assert base_of(budget) == 1_750_000_000  # a reload within the refresh: no sum at all
    assert sums(count_queries) == []

    later(monkeypatch, settled_spend.REFRESH / 2)  # the cut has not moved yet...
    assert base_of(budget) == 1_750_000_000
    later(monkeypatch, settled_spend.REFRESH)  # ...and it moves on the next grid line
    cleared(count_queries)
    assert base_of(budget) == 3_750_000_000
    assert len(sums(count_queries)) == 2  # the step the cut moved, and the records since the cut

    # A record older than the cut, appearing behind the gateway's back, is not read again...
    UsageRecord.objects.filter(cost_usd=Decimal("1.5")).update(cost_usd=Decimal("3.5"))
    later(monkeypatch, 2 * settled_spend.REFRESH)
    assert base_of(budget) == 3_750_000_000
    # ...until a change to the gateway's rows makes every process start over.
    snapshot.invalidate()
    assert base_of(budget) == 5_750_000_000


def test_the_remembered_part_moves_on_with_the_cut_by_its_steps_only(alice, at_now, monkeypatch, count_queries):
    budget = Budget.objects.create(user=alice.user, limit_usd=Decimal(100), period="month")
    used(alice, "1", NOW - timedelta(days=3))
    used(alice, "4", NOW - timedelta(minutes=1))
    assert base_of(budget) == 5_000_000_000
    used(alice, "2", NOW + timedelta(seconds=30))
    cleared(count_queries)
    later(monkeypatch, settled_spend.SETTLED_AFTER + 3 * settled_spend.REFRESH)  # every record is settled now
    assert base_of(budget) == 7_000_000_000
    step, since = sums(count_queries)
    assert '"created" <' in step and '"created" >=' in step  # the step, bounded on both sides...
    step_params, _ = sum_params(count_queries)
    assert "2026-11-01" not in step_params  # ...from the last cut, not from the period's start
    assert '"created" <' not in since
    cleared(count_queries)
    later(monkeypatch, settled_spend.SETTLED_AFTER + 4 * settled_spend.REFRESH)
    assert base_of(budget) == 7_000_000_000
    assert len(sums(count_queries)) == 2
    assert not any("2026-11-01" in params for params in sum_params(count_queries))  # never the whole period again


def test_a_period_that_starts_anew_is_summed_from_its_own_start(alice, monkeypatch):
    end_of_day = datetime(2026, 11, 20, 23, 59, tzinfo=UTC)
    monkeypatch.setattr(clock, "now", lambda: end_of_day.timestamp())
    budget = Budget.objects.create(user=alice.user, limit_usd=Decimal(10), period="day")
    used(alice, "3", end_of_day - timedelta(hours=1))
    assert base_of(budget) == 3_000_000_000
    next_day = end_of_day + timedelta(minutes=2)
    used(alice, "0.5", next_day - timedelta(seconds=30))
    monkeypatch.setattr(clock, "now", lambda: next_day.timestamp())
    assert base_of(budget) == 500_000_000


def test_a_young_period_is_summed_whole_every_time(alice, monkeypatch, count_queries):
    early = datetime(2026, 11, 20, 0, 2, tzinfo=UTC)  # two minutes into the day
    monkeypatch.setattr(clock, "now", lambda: early.timestamp())
    budget = Budget.objects.create(user=alice.user, limit_usd=Decimal(10), period="day")
    used(alice, "0.5", early - timedelta(minutes=1))
    used(alice, "9", early - timedelta(minutes=5))  # yesterday
    cleared(count_queries)
    assert base_of(budget) == 500_000_000
    assert len(sums(count_queries)) == 1
