"""The shared counters hold a limit across real processes (Redis), and atomically in one."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from studio.gateway import counters, redis_counters
from studio.gateway.counter_types import Check
from tests.gateway.spend_support import TEST_REDIS, backend, redis_available  # noqa: F401

REPO = Path(__file__).resolve().parents[2]

CHILD = r"""
import asyncio, json, os, sys
import django
django.setup()
from decimal import Decimal
from studio.core.entries import BudgetEntry, LimitEntry, ModelEntry, PriceEntry, Snapshot
from studio.core.errors import RateLimited
from studio.core.principal import Principal
from studio.gateway import admission, clock
from studio.gateway.cost import Usage

model = ModelEntry("m", "text", frozenset({"chat"}), {}, "openai", "t", 0)
snap = Snapshot(prices={"m": (PriceEntry("m", None, 0.0, per_request=Decimal(1)),)})
kind, amount = sys.argv[1], int(sys.argv[2])
if kind == "rpm":
    snap.limits = {(10, ""): LimitEntry(rpm=amount)}
else:
    snap.budgets = {("key", 10): (BudgetEntry(1, "key", 10, amount * 10**9, "day", 80, label="b"),)}
principal = Principal(user_id=1, key_id=10)
moment = [0.0]
clock.now = lambda: moment[0]

async def one():
    try:
        ticket = await admission.admit(principal, model, Usage(), snap=snap)
    except RateLimited:
        return 0
    await asyncio.sleep(0.01)
    ticket.charge(Usage(), None)
    return 1

async def main():
    print("ready", flush=True)
    for line in sys.stdin:  # each line: the clock of one burst, sent to both at once
        moment[0] = float(line)
        admitted = sum(await asyncio.gather(*(one() for _ in range(25))))
        await admission.drain()
        print(json.dumps({"admitted": admitted}), flush=True)

asyncio.run(main())
"""


def bursts(kind: str, amount: int, moments: list[float]) -> list[int]:
    """Two processes sharing Redis each try 25 calls at each moment; how many got through, per moment."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "studio.settings", "REDIS_URL": TEST_REDIS,
           "STUDIO_COUNTER_PREFIX": f"test-mp:{uuid.uuid4().hex}:", "PYTHONPATH": str(REPO)}
    children = [subprocess.Popen([sys.executable, "-c", CHILD, kind, str(amount)], cwd=REPO, env=env,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(2)]
    try:
        for child in children:  # both imported and waiting: start them at once
            assert child.stdout.readline().strip() == "ready", child.stderr.read()[-2000:]
        out = []
        for moment in moments:
            for child in children:
                child.stdin.write(f"{moment}\n")
                child.stdin.flush()
            lines = [child.stdout.readline() for child in children]
            for child, line in zip(children, lines, strict=True):
                assert line, child.stderr.read()[-2000:]
            out.append(sum(json.loads(line)["admitted"] for line in lines))
        for child in children:
            child.stdin.close()
            assert child.wait(timeout=120) == 0, child.stderr.read()[-2000:]
        return out
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()


def test_a_limit_holds_across_two_processes_sharing_redis():
    if not redis_available():
        pytest.skip("no Redis at " + TEST_REDIS)
    # 50 tried (25 each, so both took part), exactly the limit got through.
    assert bursts("budget", 35, [time.time()]) == [35]
    minute = (time.time() // 60) * 60
    # 30 at 50 s into a minute; 20 s later five sixths of them still count: room for 5 more.
    assert bursts("rpm", 30, [minute + 50, minute + 70]) == [30, 5]


async def test_check_and_add_is_all_or_nothing(backend):  # noqa: F811
    store = counters.get()
    first = await store.apply([Check("a", limit=5, need=3, add=3, ttl=60), Check("b", limit=2, need=1, add=1, ttl=60)])
    assert first.refused == -1 and first.values == (3, 1)
    refused = await store.apply([Check("b", limit=9, need=1, add=1, ttl=60), Check("a", limit=5, need=3, add=3, ttl=60)])
    assert refused.refused == 1 and refused.values == (1, 3)
    assert await store.add([("a", -3, 60), ("b", 0, 60)]) == (0, 1)  # nothing of the refused call stayed


async def test_counters_start_from_their_base_and_once_is_once(backend):  # noqa: F811
    store = counters.get()
    out = await store.apply([Check("c", limit=10, need=1, add=1, ttl=60, base=9)])
    assert out.values == (10,)
    assert (await store.apply([Check("c", limit=10, need=1, add=1, ttl=60, base=9)])).refused == 0
    assert await store.once("x", 60) is True
    assert await store.once("x", 60) is False


async def test_slots_are_held_until_freed_or_expired(backend):  # noqa: F811
    store = counters.get()
    until = time.time() + 60
    assert (await store.take_slot("v", "t1", 2, until))[0]
    assert (await store.take_slot("v", "t2", 2, until))[0]
    assert (await store.take_slot("v", "t3", 2, until)) == (False, 2)
    assert (await store.take_slot("v", "t1", 2, until))[0]  # the same task again
    await store.free_slot("v", "t1")
    assert (await store.take_slot("v", "t3", 2, until))[0]
    assert (await store.take_slot("w", "old", 1, time.time() - 1))[0]
    assert (await store.take_slot("w", "new", 1, until))[0]  # the expired holder is gone
    await asyncio.sleep(0)


async def test_a_script_redis_has_not_seen_is_loaded_on_first_use(backend, monkeypatch):  # noqa: F811
    # A fresh Redis (or one restarted, or whose script cache was flushed) knows no script.
    monkeypatch.setattr(redis_counters, "BATCH", redis_counters.BATCH + f"\n-- {uuid.uuid4().hex}\n")
    store = counters.get()
    assert (await store.apply([Check("n", limit=1, need=1, add=1, ttl=60)])).refused == -1
    assert (await store.apply([Check("n", limit=1, need=1, add=1, ttl=60)])).refused == 0


async def test_settlements_queued_without_waiting_are_applied_and_reported(backend):  # noqa: F811
    store = counters.get()
    seen = []
    for _ in range(5):
        store.add_later([("s", 2, 60)], seen.append)
    await store.flush()
    assert seen == [(2,), (4,), (6,), (8,), (10,)]
    assert await store.add([("s", 0, 60)]) == (10,)


async def test_every_key_a_script_touches_is_declared_and_all_share_one_cluster_slot(backend, settings):  # noqa: F811
    """What Redis Cluster needs of a script run, seen through MONITOR on a single Redis."""
    if backend != "redis":
        pytest.skip("a Redis check")
    from redis.asyncio import Redis
    from redis.crc import key_slot

    prefix = redis_counters.tagged(settings.STUDIO_COUNTER_PREFIX)
    seen: list[dict] = []
    sentinel = f"done-{uuid.uuid4().hex}"
    watcher = Redis.from_url(TEST_REDIS)
    monitor = watcher.monitor()
    await monitor.connect()
    await monitor.connection.send_command("MONITOR")
    assert await monitor.connection.read_response() in (b"OK", "OK")

    async def watch() -> None:
        while True:
            event = await monitor.next_command()
            if sentinel in event["command"]:
                return
            if prefix in event["command"]:
                seen.append(event)

    watching = asyncio.create_task(watch())
    store = counters.get()
    sliding = [Check("rl:1:*:rpm:9", limit=5, need=1, add=1, ttl=60, previous="rl:1:*:rpm:8", weight=0.5),
               Check("rl:1:m:tpm:9", limit=100, need=10, add=10, ttl=60, previous="rl:1:m:tpm:8", weight=0.5),
               Check("b:1:0", limit=10**9, need=1, add=1, ttl=0, base=3)]
    await asyncio.gather(*(store.apply(sliding) for _ in range(6)),  # the sixth is refused
                         store.add([("b:1:0", -1, 0), ("rl:1:m:tpm:9", 5, 60)]))
    store.add_later([("b:2:0", 4, 60)])
    await store.flush()
    assert (await store.take_slot("vs:1:*", "task", 1, time.time() + 60))[0]
    await watcher.echo(sentinel)
    await asyncio.wait_for(watching, 10)
    await monitor.connection.disconnect()
    await watcher.aclose()

    declared: set[str] = set()
    touched: set[str] = set()
    runs = 0
    for event in seen:
        args = event["command"].split(" ")
        if event["client_type"] == "lua":
            touched.add(args[1])
        elif args[0].upper() in ("EVALSHA", "EVAL"):
            runs += 1
            keys = args[3:3 + int(args[2])]
            assert keys and all(key.startswith(prefix) for key in keys)
            assert len({key_slot(key.encode()) for key in keys}) == 1  # one slot per call
            declared.update(keys)
    assert runs >= 3 and f"{prefix}rl:1:*:rpm:8" in touched  # the previous window was read...
    assert touched <= declared  # ...and every key a script touched was named in KEYS
    assert len({key_slot(key.encode()) for key in declared}) == 1  # the hash tag: one slot for all
