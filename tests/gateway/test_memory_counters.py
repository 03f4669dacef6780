"""Counters in memory (no Redis): leases as in Redis, exact at the limit, atomic across threads."""

from __future__ import annotations

import asyncio
import threading

from studio.gateway import leases
from studio.gateway.counter_types import Check
from studio.gateway.memory_counters import MemoryCounters

RPM = "rl:7:*:rpm:1"


def rpm(limit: int, add: int = 1, key: str = RPM, previous: str = "", weight: float = 0.0) -> list[Check]:
    return [Check(key, limit=limit, need=add, add=add, ttl=120, previous=previous, weight=weight)]


def stored(store: MemoryCounters, key: str) -> int:
    return store.values[key][0] if key in store.values else 0


def counting(store: MemoryCounters) -> list[int]:
    """How many admissions built their checks (the others were served from a lease)."""
    checked: list[int] = []
    check = store.check

    def counted(checks):
        checked.append(len(checks))
        return check(checks)

    store.check = counted
    return checked


async def test_calls_under_a_roomy_limit_are_served_from_a_lease_and_the_rest_is_given_back():
    store = MemoryCounters()
    checked = counting(store)
    first = await store.apply(rpm(100_000))
    assert first.values == (1,) and stored(store, RPM) == 1 + leases.CALLS  # a lease was taken
    values = [store.take((RPM,), [100_000], [1])[0][0] for _ in range(19)]
    assert values == list(range(2, 21))  # the count each call saw, as without leases
    assert len(checked) == 1
    assert await store.add([(RPM, 0, 120)]) == (20,)  # read without what is held
    await store.flush()
    assert stored(store, RPM) == 20 and not store.book.held


async def test_a_counter_near_its_limit_is_leased_nothing_and_its_limit_is_exact():
    store = MemoryCounters()
    outcomes = [await store.apply(rpm(50)) for _ in range(60)]
    assert [o.refused for o in outcomes] == [-1] * 50 + [0] * 10
    assert stored(store, RPM) == 50 and not store.book.held
    roomy = [await store.apply(rpm(300, add=2)) for _ in range(151)]  # leases while room is left
    assert [o.refused for o in roomy] == [-1] * 125 + [0] * 26  # 50 of 300 used: 250 left, 2 a call
    assert roomy[124].values == (300,)


async def test_another_check_of_a_held_counter_counts_what_is_held_once():
    store = MemoryCounters()
    budget = Check("b:3:0", limit=10_000, need=10, add=10, ttl=0)
    alice = [*rpm(10**6, key="rl:1:*:rpm:1"), budget]
    bob = [*rpm(10**6, key="rl:2:*:rpm:1"), budget]  # another key under the same team budget
    assert (await store.apply(alice)).values == (1, 10)
    assert stored(store, "b:3:0") > 10  # Alice's process holds a lease of the budget
    assert (await store.apply(bob)).values == (1, 20)  # Bob's check folds it in: counted once
    spent = 20
    while (await store.apply(bob if spent % 20 else alice)).refused < 0:
        spent += 10
    assert spent == 10_000  # neither refused for units held: the whole budget was used


async def test_a_settlement_goes_to_the_lease_and_the_counter_ends_at_what_was_used():
    store = MemoryCounters()
    seen = []
    for _ in range(20):  # each call reserves 10 tokens and uses 3
        if store.take((RPM,), [100_000], [10]) is None:
            await store.apply(rpm(100_000, add=10))
        store.add_later([(RPM, -7, 120)], seen.append)
    assert seen[0] == (3,) and seen[-1] == (60,)  # the counter without what is held
    await store.flush()
    assert stored(store, RPM) == 60


async def test_a_lease_past_its_time_is_given_back_by_the_next_operation():
    store = MemoryCounters(lease_seconds=0.02)
    await store.apply(rpm(10_000))
    assert stored(store, RPM) > 1
    await asyncio.sleep(0.05)
    assert store.take((RPM,), [10_000], [1]) is None  # past its time: it serves no more
    assert (await store.apply(rpm(10_000, key="rl:7:m:rpm:1"))).values == (1,)  # another counter's check
    assert stored(store, RPM) == 1


async def test_the_previous_minute_counts_without_what_is_held_of_it():
    store = MemoryCounters()
    for _ in range(10):
        await store.apply(rpm(1_000, key="rl:7:*:rpm:0"))  # a lease of minute 0's counter, then more
    assert stored(store, "rl:7:*:rpm:0") > 10
    out = await store.apply(rpm(1_000, previous="rl:7:*:rpm:0", weight=1.0))  # minute 1, at its start
    assert out.values == (1,) and out.previous == (10,)


async def test_a_changed_limit_is_checked_at_once():
    store = MemoryCounters()
    for _ in range(5):
        if store.take((RPM,), [10_000], [1]) is None:
            await store.apply(rpm(10_000))
    assert store.take((RPM,), [5], [1]) is None  # an admin lowered it: the lease does not serve it
    lowered = await store.apply(rpm(5))
    assert lowered.refused == 0 and lowered.values == (5,)


def test_threads_with_loops_of_their_own_never_admit_past_the_limit():
    store = MemoryCounters()
    admitted = []

    async def calls() -> int:
        count = 0
        for _ in range(500):
            served = store.take((RPM,), [1_500], [1])
            if served is not None or (await store.apply(rpm(1_500))).refused < 0:
                count += 1
        return count

    threads = [threading.Thread(target=lambda: admitted.append(asyncio.run(calls()))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(admitted) == 4 and sum(admitted) == 1_500
    asyncio.run(store.flush())
    assert stored(store, RPM) == 1_500
