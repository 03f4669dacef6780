"""Choosing upstreams: priority tiers, weighted order within a tier, the breaker and failover."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from studio.core.entries import Snapshot
from studio.core.errors import BadRequest, NoUpstream, UpstreamError, UpstreamUnavailable
from studio.gateway import health, routing
from tests.gateway.catalog import upstream_entry as up

MODEL = "m"


def snap(*upstreams) -> Snapshot:
    return Snapshot(upstreams_for={MODEL: tuple(upstreams)})


def trip(upstream) -> None:
    for _ in range(health.FAILURES_TO_OPEN):
        routing.record_failure(upstream, UpstreamError("down"))


def test_no_upstream_names_the_model():
    with pytest.raises(NoUpstream) as exc:
        routing.candidates(Snapshot(), MODEL)
    assert exc.value.param == "model" and exc.value.status == 503


def test_higher_priority_tiers_come_first():
    low, high, mid = up(1, priority=0), up(2, priority=10), up(3, priority=5)
    for seed in range(20):
        assert [u.id for u in routing.candidates(snap(low, high, mid), MODEL, random.Random(seed))] == [2, 3, 1]


def test_weights_split_traffic_within_a_tier():
    heavy, light = up(1, weight=9), up(2, weight=1)
    rng = random.Random(1234)
    firsts = Counter(routing.candidates(snap(heavy, light), MODEL, rng)[0].id for _ in range(2000))
    assert 0.86 < firsts[1] / 2000 < 0.94
    # Every upstream of the tier is still in the order, once.
    assert sorted(u.id for u in routing.candidates(snap(heavy, light), MODEL, rng)) == [1, 2]


def test_the_breaker_opens_after_repeated_failures_and_sends_the_upstream_last():
    first, second = up(1, priority=10), up(2, priority=0)
    routing.record_failure(first, UpstreamError("down"))
    routing.record_failure(first, UpstreamError("down"))
    assert [u.id for u in routing.candidates(snap(first, second), MODEL)] == [1, 2]  # not yet open
    routing.record_failure(first, UpstreamError("down"))
    assert [u.id for u in routing.candidates(snap(first, second), MODEL)] == [2, 1]  # still tried last: the probe


def test_the_breaker_half_opens_after_its_time_and_a_success_closes_it(monkeypatch):
    first, second = up(1, priority=10), up(2, priority=0)
    now = [1000.0]
    monkeypatch.setattr(health.time, "time", lambda: now[0])
    trip(first)
    assert routing.candidates(snap(first, second), MODEL)[0].id == 2
    now[0] += health.OPEN_SECONDS + 0.1
    assert routing.candidates(snap(first, second), MODEL)[0].id == 1  # half-open: tried first again
    routing.record_failure(first, UpstreamError("down"))  # the probe failed: open again at once (failures were not reset)
    assert routing.candidates(snap(first, second), MODEL)[0].id == 2
    routing.record_success(first)
    assert routing.candidates(snap(first, second), MODEL)[0].id == 1
    routing.record_failure(first, UpstreamError("down"))
    assert routing.candidates(snap(first, second), MODEL)[0].id == 1  # the count starts over


def test_reset_health_forgets_every_breaker():
    first, second = up(1, priority=10), up(2)
    trip(first)
    routing.reset_health()
    assert routing.candidates(snap(first, second), MODEL)[0].id == 1


async def test_with_failover_moves_on_only_for_retryable_errors():
    ups = [up(1), up(2), up(3)]
    tried = []

    async def call(u):
        tried.append(u.id)
        if u.id == 1:
            raise UpstreamUnavailable("busy")
        return f"answer from {u.id}"

    chosen, result = await routing.with_failover(ups, call)
    assert (chosen.id, result, tried) == (2, "answer from 2", [1, 2])

    async def rejected(u):
        tried.append(u.id)
        raise BadRequest("your fault", param="prompt")

    tried.clear()
    with pytest.raises(BadRequest):
        await routing.with_failover(ups, rejected)
    assert tried == [1]


async def test_with_failover_raises_the_last_error_and_counts_failures():
    async def down(u):
        raise UpstreamError(f"down {u.id}")

    ups = [up(1, priority=10), up(2, priority=10)]
    for _ in range(health.FAILURES_TO_OPEN):
        with pytest.raises(UpstreamError, match="down 2"):
            await routing.with_failover(ups, down)
    # Both breakers are open now: a lower tier that is healthy goes before them.
    assert routing.candidates(snap(up(3, priority=0), *ups), MODEL)[0].id == 3


async def test_stream_fails_over_only_before_the_first_item():
    chosen = []

    def open_stream(u):
        async def items():
            if u.id == 1:
                raise UpstreamUnavailable("busy")
            yield f"{u.id}-a"
            if u.id == 2:
                raise UpstreamError("broke mid-stream")
            yield f"{u.id}-b"
        return items()

    got = []
    with pytest.raises(UpstreamError, match="mid-stream"):
        async for item in routing.stream_with_failover([up(1), up(2), up(3)], open_stream, chosen.append):
            got.append(item)
    assert got == ["2-a"] and [u.id for u in chosen] == [2]  # never spliced with upstream 3

    chosen.clear()
    got = [item async for item in routing.stream_with_failover([up(1), up(3)], open_stream, chosen.append)]
    assert got == ["3-a", "3-b"] and [u.id for u in chosen] == [3]


async def test_stream_non_retryable_error_is_raised_and_names_the_upstream():
    chosen = []

    def open_stream(u):
        async def items():
            raise BadRequest("bad body", param="messages")
            yield  # pragma: no cover
        return items()

    with pytest.raises(BadRequest):
        async for _ in routing.stream_with_failover([up(1), up(2)], open_stream, chosen.append):
            pass
    assert [u.id for u in chosen] == [1]


async def test_an_empty_stream_still_reports_its_upstream():
    chosen = []

    def open_stream(u):
        async def items():
            return
            yield  # pragma: no cover
        return items()

    assert [i async for i in routing.stream_with_failover([up(5)], open_stream, chosen.append)] == []
    assert [u.id for u in chosen] == [5]
