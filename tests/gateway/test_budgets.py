"""Budgets on their own: periods in UTC, which budgets apply, what a reservation holds, and the
refusal a client sees."""

from __future__ import annotations

from datetime import UTC, datetime

from studio.core.entries import BudgetEntry, Snapshot
from studio.core.errors import QuotaExceeded
from studio.core.principal import Principal
from studio.gateway import budgets

WEDNESDAY = datetime(2026, 3, 18, 15, 0, tzinfo=UTC).timestamp()


def budget(period: str = "day", scope: str = "key", target: int = 10, **kw) -> BudgetEntry:
    return BudgetEntry(id=kw.pop("id", 1), scope=scope, target_id=target, limit_nano=kw.pop("limit", 5 * 10**9),
                       period=period, soft_percent=kw.pop("soft", 80), label=f"the budget of {scope} {target}", **kw)


def test_windows_start_in_utc():
    assert budgets.window("day", WEDNESDAY)[0] == datetime(2026, 3, 18, tzinfo=UTC).timestamp()
    assert budgets.window("week", WEDNESDAY)[0] == datetime(2026, 3, 16, tzinfo=UTC).timestamp()
    assert budgets.window("month", WEDNESDAY) == (datetime(2026, 3, 1, tzinfo=UTC).timestamp(),
                                                  datetime(2026, 4, 1, tzinfo=UTC).timestamp())
    assert budgets.window("total", WEDNESDAY) == (0.0, None)


def test_a_month_window_knows_february_and_december():
    feb = datetime(2028, 2, 10, tzinfo=UTC).timestamp()  # a leap year
    assert budgets.window("month", feb)[1] == datetime(2028, 3, 1, tzinfo=UTC).timestamp()
    dec = datetime(2026, 12, 31, 23, 59, tzinfo=UTC).timestamp()
    assert budgets.window("month", dec)[1] == datetime(2027, 1, 1, tzinfo=UTC).timestamp()


def test_key_user_and_team_budgets_all_apply():
    mine, user, team, other = budget(id=1), budget(scope="user", target=2, id=2), budget(scope="team", target=3, id=3), \
        budget(scope="team", target=4, id=4)
    snap = Snapshot(budgets={("key", 10): (mine,), ("user", 2): (user,), ("team", 3): (team,), ("team", 4): (other,)})
    assert budgets.applicable(snap, Principal(user_id=2, key_id=10, team_id=3)) == [mine, user, team]
    assert budgets.applicable(snap, Principal(user_id=2)) == [user]  # a studio user without key or team


def test_each_budget_gets_a_counter_of_its_own_period():
    day, total = budget("day", id=1), budget("total", id=2)
    checks, holds = budgets.checks([day, total], 700, WEDNESDAY)
    assert [c.add for c in checks] == [700, 700]
    assert checks[0].key != checks[1].key
    assert holds[0].window_start == budgets.window("day", WEDNESDAY)[0] and holds[1].ttl == 0  # a total never expires
    assert checks[0].ttl > 0


def test_the_database_spend_seeds_only_the_period_it_was_read_for():
    start, _ = budgets.window("day", WEDNESDAY)
    same = budget(base_nano=123, base_window=start)
    older = budget(base_nano=123, base_window=start - budgets.DAY)
    assert budgets.checks([same], 1, WEDNESDAY)[0][0].base == 123
    assert budgets.checks([older], 1, WEDNESDAY)[0][0].base == 0


def test_refusal_names_the_budget_and_when_it_resets():
    error = budgets.refusal(budget("day"), WEDNESDAY)
    assert isinstance(error, QuotaExceeded) and error.code == "insufficient_quota"
    assert "the budget of key 10" in error.message and "$5 per day" in error.message
    assert error.details["resets_at"] == "2026-03-19T00:00:00Z" and error.retry_after == 9 * 3600
    total = budgets.refusal(budget("total"), WEDNESDAY)
    assert total.details["resets_at"] is None and total.retry_after is None and "does not reset" in total.message


def test_soft_threshold_is_crossed_once():
    b = budget(limit=1000, soft=80)
    assert budgets.soft_crossed(b, 700, 800)
    assert not budgets.soft_crossed(b, 800, 900) and not budgets.soft_crossed(b, 100, 799)
