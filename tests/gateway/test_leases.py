"""Leases: a process admits calls against counter units it took ahead, and gives back the rest."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from studio.gateway import leases, redis_counters
from studio.gateway.counter_types import Check
from studio.gateway.redis_counters import RedisCounters
from tests.gateway.spend_support import TEST_REDIS, redis_available


@pytest.fixture
def prefix(settings) -> str:
    if not redis_available():
        pytest.skip("no Redis at " + TEST_REDIS)
    settings.REDIS_URL = TEST_REDIS
    settings.STUDIO_COUNTER_PREFIX = f"test-lease:{uuid.uuid4().hex}:"
    return settings.STUDIO_COUNTER_PREFIX


def process(prefix: str) -> RedisCounters:
    """Counters as another process sharing the same Redis has them."""
    return RedisCounters(TEST_REDIS, prefix)


def counting(store: RedisCounters) -> list[int]:
    runs: list[int] = []
    run = store._run

    async def counted(ops):
        runs.append(len(ops))
        return await run(ops)

    store._run = counted
    return runs


def rpm(limit: int, add: int = 1) -> list[Check]:
    return [Check("rl:7:*:rpm:1", limit=limit, need=add, add=add, ttl=120)]


async def stored(store: RedisCounters, key: str) -> int:
    return int(await store.redis.get(store.prefix + key) or 0)


async def test_calls_under_a_roomy_limit_are_admitted_without_a_round_trip_each(prefix):
    store = process(prefix)
    runs = counting(store)
    values = [(await store.apply(rpm(100_000))).values[0] for _ in range(20)]  # room for a whole lease
    assert values == list(range(1, 21))  # the count each call saw, as without leases
    assert len(runs) == 1  # the first call took a lease; the other 19 were served from it
    assert await stored(store, "rl:7:*:rpm:1") == 1 + leases.CALLS
    await store.flush()  # what is held goes back
    assert await stored(store, "rl:7:*:rpm:1") == 20


async def test_concurrent_calls_wait_for_a_lease_on_its_way_instead_of_each_making_a_round_trip(prefix):
    store = process(prefix)
    runs = counting(store)
    outcomes = await asyncio.gather(*(store.apply(rpm(100_000)) for _ in range(16 * leases.CALLS)))
    assert sorted(o.values[0] for o in outcomes) == list(range(1, 16 * leases.CALLS + 1))
    assert sum(runs) <= 20  # a lease for every CALLS calls, not a round trip for each
    await store.flush()
    assert await stored(store, "rl:7:*:rpm:1") == 16 * leases.CALLS


async def test_leases_of_counters_used_at_different_paces_are_renewed_as_each_runs_out(prefix):
    store = process(prefix)
    runs = counting(store)
    for i in range(20 * leases.CALLS):  # the tokens' lease outlasts the requests' one, and is folded
        tokens = 100 if i % 2 else 10
        checks = [*rpm(10**6), Check("rl:7:*:tpm:1", limit=10**9, need=tokens, add=tokens, ttl=120)]
        assert (await store.apply(checks)).refused < 0
    assert sum(runs) <= 45
    await store.flush()
    assert await stored(store, "rl:7:*:rpm:1") == 20 * leases.CALLS
    assert await stored(store, "rl:7:*:tpm:1") == 10 * leases.CALLS * 110


async def test_settlements_go_to_the_lease_and_the_counter_ends_at_what_was_used(prefix):
    store = process(prefix)
    runs = counting(store)
    seen = []
    for _ in range(20):  # each call reserves 10 tokens and uses 3
        await store.apply(rpm(100_000, add=10))
        store.add_later([("rl:7:*:rpm:1", -7, 120)], seen.append)
    assert len(runs) == 1
    assert seen[0] == (3,) and seen[-1] == (60,)  # the counter without what is held
    await store.flush()
    assert await stored(store, "rl:7:*:rpm:1") == 60


async def test_a_counter_near_its_limit_is_leased_nothing_and_stays_exact_between_processes(prefix):
    one, two = process(prefix), process(prefix)
    admitted = 0
    for store in [one, two] * 30:  # 60 tries, alternating, for a limit of 50
        admitted += (await store.apply(rpm(50))).refused < 0
    assert admitted == 50
    assert await stored(one, "rl:7:*:rpm:1") == 50


async def test_a_process_never_refuses_itself_for_units_it_holds(prefix):
    store = process(prefix)
    outcomes = [await store.apply(rpm(300, add=2)) for _ in range(151)]
    assert [o.refused for o in outcomes] == [-1] * 150 + [0]
    assert outcomes[149].values[0] == 300
    await store.flush()
    assert await stored(store, "rl:7:*:rpm:1") == 300


async def test_units_one_process_holds_are_free_for_the_others_once_given_back(prefix):
    one, two = process(prefix), process(prefix)
    await one.apply(rpm(1_000, add=10))  # takes a lease: 10 calls, more than the room it leaves
    held = await stored(one, "rl:7:*:rpm:1") - 10
    assert held > 0
    for _ in range((1_000 - 10 - held) // 10):
        assert (await two.apply(rpm(1_000, add=10))).refused < 0
    assert (await two.apply(rpm(1_000, add=10))).refused == 0  # the rest is held by the other
    await one.flush()
    assert (await two.apply(rpm(1_000, add=10))).refused < 0


async def test_a_lease_past_its_time_is_given_back(prefix, monkeypatch, settings):
    settings.STUDIO_COUNTER_LEASE_SECONDS = 0.05
    monkeypatch.setattr(redis_counters, "SETTLE_DELAY", 0.01)
    store = process(prefix)
    for _ in range(3):
        await store.apply(rpm(10_000))
    assert await stored(store, "rl:7:*:rpm:1") > 3
    for _ in range(100):
        await asyncio.sleep(0.02)
        if await stored(store, "rl:7:*:rpm:1") == 3:
            break
    assert await stored(store, "rl:7:*:rpm:1") == 3
    assert not store._leases.held


async def test_a_changed_limit_is_checked_in_redis_at_once(prefix):
    store = process(prefix)
    for _ in range(5):
        await store.apply(rpm(10_000))
    lowered = await store.apply(rpm(5))  # an admin lowered it: the lease does not serve it
    assert lowered.refused == 0 and lowered.values[0] == 5


async def test_a_call_served_by_its_counters_keys_sees_what_its_checks_would_and_never_a_lease_given_back(prefix):
    store = process(prefix)
    runs = counting(store)
    keys = ("rl:7:*:rpm:1", "rl:7:*:tpm:1")
    checks = [*rpm(10_000), Check(keys[1], limit=10**6, need=5, add=5, ttl=120)]
    assert store.take(keys, [10_000, 10**6], [1, 5]) is None  # nothing is held yet
    assert (await store.apply(checks)).values == (1, 5)  # leases taken with this round trip
    assert store.take(keys, [10_000, 10**6], [1, 5]) == ((2, 10), (0, 0))
    assert store.take(keys, [9_999, 10**6], [1, 5]) is None  # another limit: not what the lease is for
    assert store.add_held(keys[1:], [-3]) == (7,)  # a settlement: 3 of the 5 tokens were not used
    assert len(runs) == 1
    await store.flush()  # every lease given back: the counters' bundle of leases goes with them
    assert store.take(keys, [10_000, 10**6], [1, 5]) is None
    assert store.add_held(keys[1:], [-3]) is None
    assert (await store.apply(checks)).values == (3, 12)
    assert store.take(keys, [10_000, 10**6], [1, 5]) == ((4, 17), (0, 0))
    await store.flush()
    assert [await stored(store, key) for key in keys] == [4, 17]


def test_a_bundle_of_leases_serves_only_under_the_limits_and_time_its_leases_have_now(monkeypatch):
    book = leases.Book()
    keys = ("rl:7:*:rpm:1", "rl:7:*:tpm:1")
    limits = (10_000, 10**6)  # a shape's limits: the same object call after call
    book.add(keys[0], 50, 0, 0, 10_000, 120)
    book.add(keys[1], 500, 0, 0, 10**6, 120)
    assert book.take(keys, limits, [1, 5]) == ((1, 5), (0, 0))
    book.add(keys[1], 100, 5, 0, 2_000, 120)  # renewed under a lowered limit
    assert book.take(keys, limits, [1, 5]) is None
    assert book.take(keys, (10_000, 2_000), [1, 5]) == ((2, 10), (0, 0))
    now = leases.time.monotonic()
    monkeypatch.setattr(leases.time, "monotonic", lambda: now + leases.SECONDS + 1)
    assert book.take(keys, (10_000, 2_000), [1, 5]) is None  # both leases past their time
    assert book.settle(keys, [0, -3]) is None


def test_a_call_one_lease_cannot_serve_moves_none_of_them_and_the_units_held_stay_whole():
    book = leases.Book()
    keys = ("rl:7:*:rpm:1", "rl:7:*:tpm:1", "b:3:0")
    limits = (10_000, 10**6, 10**9)
    book.add(keys[0], 50, 10, 0, 10_000, 120)
    book.add(keys[1], 500, 100, 0, 10**6, 120)
    book.add(keys[2], 40, 7, 0, 10**9, 0)
    assert book.take(keys, limits, [1, 5, 41]) is None  # the budget's lease holds 40: nothing moves
    assert [book.held[key].left for key in keys] == [50, 500, 40]
    assert book.take(keys, limits, [1, 5, 40]) == ((11, 105, 47), (0, 0, 0))
    assert book.settle(keys[1:], [-3, 2]) is None  # the budget's lease has nothing left to take from
    assert book.settle(keys[1:], [-3, -10]) == (102, 37)  # what was reserved and not used comes back
    assert [book.held[key].left for key in keys] == [49, 498, 10]
    book.add(keys[1], 200, 150, 9, 10**6, 120)  # renewed: a round trip found the counter further on
    assert (book.held[keys[1]].value, book.held[keys[1]].left) == (150, 698)
    assert book.take(keys, limits, [1, 5, 0]) == ((12, 155, 37), (0, 9, 0))
    assert book.ended(everything=True) == [(keys[0], -48, 120), (keys[1], -693, 120), (keys[2], -10, 0)]


def test_checks_take_their_kind_s_amount_and_a_refused_call_puts_back_what_each_took():
    """A call names its amounts once (one request, its tokens, its reserve) and which one each
    counter takes; two counters of one kind take the same amount, and when a later lease has no
    room, every counter already moved goes back by exactly what it took."""
    book = leases.Book()
    keys = ("rl:7:*:rpm:1", "rl:7:m:tpm:1", "rl:7:*:tpm:1", "b:3:0")
    limits = (10_000, 10**6, 10**6, 10**9)
    kinds = (0, 1, 1, 2)  # request, tokens, tokens, reserve
    book.add(keys[0], 50, 10, 0, 10_000, 120)
    book.add(keys[1], 500, 100, 0, 10**6, 120)
    book.add(keys[2], 500, 200, 0, 10**6, 120)
    book.add(keys[3], 40, 7, 0, 10**9, 0)
    assert book.take(keys, limits, (1, 300, 41), kinds) is None  # the reserve does not fit
    assert [book.held[key].value for key in keys] == [10, 100, 200, 7]
    assert book.take(keys, limits, (1, 300, 40), kinds) == ((11, 400, 500, 47), (0, 0, 0, 0))
    # A settlement: the budget by the cost's part, both token limits by the tokens'.
    assert book.settle(keys[1:], (-100, -15), (0, 0, 1)) == (300, 400, 32)
