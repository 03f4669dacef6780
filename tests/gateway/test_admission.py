"""The admission point: budgets and limits reserved before a call and settled after it, with
the clock moved by the test."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from studio.core.entries import BudgetEntry, LimitEntry, ModelEntry, PriceEntry, Snapshot
from studio.core.errors import LimitExceeded, QuotaExceeded
from studio.core.principal import Principal
from studio.gateway import admission, budgets, clock
from studio.gateway.cost import Usage
from tests.gateway.spend_support import backend  # noqa: F401

MODEL = ModelEntry(model_id="m", kind="text", routes=frozenset({"chat"}), capabilities={}, default_protocol="openai",
                   owned_by="t", created=0)
PRICE = PriceEntry(model_id="m", upstream_id=None, effective_from=0.0, per_request=Decimal("1"))
ALICE = Principal(user_id=1, key_id=10, team_id=5)
# Settling writes usage rows off the response path; the drain after each test needs the database.
pytestmark = pytest.mark.django_db(transaction=True)


def snap(*, budgets_=(), limits_=None) -> Snapshot:
    s = Snapshot(prices={"m": (PRICE,)})
    for b in budgets_:
        s.budgets.setdefault((b.scope, b.target_id), ())
        s.budgets[(b.scope, b.target_id)] += (b,)
    s.limits = limits_ or {}
    return s


def budget(period: str, usd: int, scope: str = "key", target: int = 10, **kw) -> BudgetEntry:
    return BudgetEntry(id=kw.pop("id", 1), scope=scope, target_id=target, limit_nano=usd * 10**9, period=period,
                       soft_percent=kw.pop("soft", 80), label=f"the budget of {scope} {target}", **kw)


@pytest.fixture
def at(monkeypatch):
    moment = {"t": datetime(2026, 3, 31, 23, 59, 0, tzinfo=UTC).timestamp()}
    monkeypatch.setattr(clock, "now", lambda: moment["t"])
    return moment


async def charge_one(s: Snapshot, principal: Principal = ALICE) -> admission.Ticket:
    ticket = await admission.admit(principal, MODEL, Usage(), snap=s)
    ticket.charge(Usage(), None)
    await admission.drain()
    return ticket


@pytest.mark.parametrize("period", ["day", "month"])
async def test_budget_stops_then_resets_with_the_period(backend, at, period):  # noqa: F811
    s = snap(budgets_=[budget(period, 3)])
    for _ in range(3):
        await charge_one(s)
    with pytest.raises(QuotaExceeded) as refused:
        await admission.admit(ALICE, MODEL, Usage(), snap=s)
    assert "the budget of key 10" in refused.value.message
    assert refused.value.details["resets_at"] == "2026-04-01T00:00:00Z"
    assert 0 < refused.value.retry_after <= 60
    at["t"] += 61  # the next day, and the next month
    await charge_one(s)


async def test_total_budget_never_resets(backend, at):  # noqa: F811
    s = snap(budgets_=[budget("total", 1)])
    await charge_one(s)
    at["t"] += 400 * 86400
    with pytest.raises(QuotaExceeded) as refused:
        await admission.admit(ALICE, MODEL, Usage(), snap=s)
    assert refused.value.details["resets_at"] is None


async def test_user_and_team_budgets_apply_to_every_key(backend, at):  # noqa: F811
    s = snap(budgets_=[budget("day", 2, scope="team", target=5, id=2)])
    await charge_one(s, Principal(user_id=1, key_id=10, team_id=5))
    await charge_one(s, Principal(user_id=2, key_id=11, team_id=5))
    with pytest.raises(QuotaExceeded):
        await admission.admit(Principal(user_id=3, key_id=12, team_id=5), MODEL, Usage(), snap=s)
    await charge_one(s, Principal(user_id=3, key_id=13, team_id=None))  # not in the team


async def test_a_failed_call_releases_its_reservation(backend, at):  # noqa: F811
    s = snap(budgets_=[budget("day", 1)])
    ticket = await admission.admit(ALICE, MODEL, Usage(), snap=s)
    with pytest.raises(QuotaExceeded):  # the reservation holds the whole dollar
        await admission.admit(ALICE, MODEL, Usage(), snap=s)
    assert ticket.charge(None, None) == 0
    await admission.drain()
    await charge_one(s)


async def test_database_spend_is_the_starting_point_of_a_fresh_counter(backend, at):  # noqa: F811
    start, _ = budgets.window("day", at["t"])
    s = snap(budgets_=[budget("day", 3, base_nano=2 * 10**9, base_window=start)])
    await charge_one(s)
    with pytest.raises(QuotaExceeded):
        await admission.admit(ALICE, MODEL, Usage(), snap=s)
    at["t"] += 120  # a new day: the stored spend belonged to yesterday
    await charge_one(s)


async def test_requests_per_minute_with_headers_then_429(backend, at):  # noqa: F811
    at["t"] = datetime(2026, 3, 31, 12, 0, 15, tzinfo=UTC).timestamp()
    s = snap(limits_={(10, ""): LimitEntry(rpm=2), (10, "m"): LimitEntry(rpm=5)})
    first = await charge_one(s)
    assert first.headers["x-ratelimit-limit-requests"][1] == "2"
    assert first.headers["x-ratelimit-remaining-requests"][1] == "1"
    assert first.headers["x-ratelimit-reset-requests"][1] == "45s"
    await charge_one(s)
    with pytest.raises(LimitExceeded) as refused:
        await admission.admit(ALICE, MODEL, Usage(), snap=s)
    assert refused.value.details["limit"] == "requests"
    assert refused.value.details["headers"]["x-ratelimit-remaining-requests"] == "0"
    assert refused.value.retry_after == 46  # the first whole second after the minute turns
    at["t"] += 45  # the next minute: the last 60 seconds still hold both requests
    with pytest.raises(LimitExceeded):
        await admission.admit(ALICE, MODEL, Usage(), snap=s)
    at["t"] += 1  # as retry-after said: one has slid out far enough
    await charge_one(s)


async def test_a_burst_across_a_minute_boundary_gets_no_more_than_the_limit(backend, at):  # noqa: F811
    s = snap(limits_={(10, ""): LimitEntry(rpm=10)})
    at["t"] = datetime(2026, 3, 31, 12, 0, 50, tzinfo=UTC).timestamp()
    for _ in range(10):  # the whole limit at the end of one minute
        await charge_one(s)
    at["t"] += 20  # 12:01:10: five sixths of the previous minute are still inside the window

    async def tries(n: int) -> list[admission.Ticket | None]:
        out = []
        for _ in range(n):
            try:
                out.append(await charge_one(s))
            except LimitExceeded:
                out.append(None)
        return out

    burst = await tries(10)
    admitted = [t for t in burst if t is not None]
    assert len(admitted) == 2  # 10 x 50/60: 8 still count, room for 2, not 10 more
    assert admitted[-1].headers["x-ratelimit-remaining-requests"][1] == "0"
    at["t"] += 20  # 12:01:30: half of the previous minute counts (5) plus the 3 of this one
    again = await charge_one(s)
    assert again.headers["x-ratelimit-remaining-requests"][1] == "2"
    assert again.headers["x-ratelimit-reset-requests"][1] == "1m10s"  # until this minute's 3 slide out
    at["t"] += 90  # 12:03:00: the window is empty again
    assert all(t is not None for t in await tries(10))


async def test_tokens_per_minute_reserve_the_estimate_and_settle_the_real_count(backend, at):  # noqa: F811
    s = snap(limits_={(10, ""): LimitEntry(tpm=1000)})
    ticket = await admission.admit(ALICE, MODEL, Usage(), tokens=800, snap=s)
    with pytest.raises(LimitExceeded) as refused:
        await admission.admit(ALICE, MODEL, Usage(), tokens=300, snap=s)
    assert refused.value.details["limit"] == "tokens"
    ticket.charge(Usage(input_tokens=50, output_tokens=50), None)  # it used far less
    await admission.drain()
    second = await admission.admit(ALICE, MODEL, Usage(), tokens=300, snap=s)
    assert second.headers["x-ratelimit-remaining-tokens"][1] == "600"


async def test_soft_threshold_raises_one_alert_per_period(backend, at, monkeypatch):  # noqa: F811
    raised = []
    monkeypatch.setattr(admission.budget_alerts, "raise_alert", lambda b, level, start, spent: raised.append(
        (b.id, level, spent)))
    s = snap(budgets_=[budget("day", 10, soft=20)])
    for _ in range(4):
        await charge_one(s)
    assert raised == [(1, "soft", Decimal(2))]


async def test_a_settlement_served_from_a_lease_raises_the_soft_alert_it_crosses(backend, at,  # noqa: F811
                                                                                  monkeypatch):
    raised = []
    monkeypatch.setattr(admission.budget_alerts, "raise_alert", lambda b, level, start, spent: raised.append(
        (b.id, level, spent)))
    s = snap(budgets_=[budget("day", 1000, soft=1)])  # room for a lease: the calls after the first are served from it
    for _ in range(12):
        await charge_one(s)
    assert raised == [(1, "soft", Decimal(10))]


@pytest.mark.parametrize("broken", ["client", "take", "apply"])
async def test_unreachable_counters_admit_the_call_without_limits(at, monkeypatch, caplog, broken):
    from studio.gateway import counters, memory_counters

    class Unreachable(memory_counters.MemoryCounters):
        def take(self, keys, limits, adds):
            if broken == "take":
                raise ConnectionError("counters down")
            return None

        async def apply(self, checks):
            raise ConnectionError("counters down")

    def get():
        if broken == "client":
            raise ValueError("no such counter store")
        return Unreachable()

    monkeypatch.setattr(counters, "get", get)
    s = snap(limits_={(10, ""): LimitEntry(rpm=1)}, budgets_=[budget("day", 1)])
    for _ in range(3):  # past the limit and the budget: nothing can be counted, so nothing is refused
        ticket = await admission.admit(ALICE, MODEL, Usage(), snap=s)
        assert ticket.headers is None and not ticket.settled_keys
    assert "spend counters unavailable" in caplog.text


def test_a_tickets_cost_reads_0_until_charged_then_its_cost_as_the_answer_shows_it():
    ticket = admission.Ticket(ALICE, "m", (PriceEntry(model_id="m", upstream_id=None, effective_from=0.0,
                                                      input_per_million=Decimal("1.25")),), at=0.0)
    assert ticket.cost_display() == "0"  # asked before the charge: not kept
    ticket.charge(Usage(input_tokens=1000), None)
    assert ticket.cost == Decimal("0.00125") and ticket.cost_display() == "0.00125"
    ticket.charge(Usage(input_tokens=9000), None)  # settled once: the first charge stands
    assert ticket.cost_display() == "0.00125"
    failed = admission.Ticket(ALICE, "m", (PRICE,), at=0.0)
    failed.charge(None, None)
    assert failed.cost_display() == "0"
