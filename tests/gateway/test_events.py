"""Gateway events: handlers per kind, in place without Redis and across processes with it."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from studio.gateway import events
from tests.gateway.spend_support import TEST_REDIS, redis_available


@pytest.fixture
def heard(monkeypatch):
    """A fresh handler table with one handler recording ``ping`` events."""
    monkeypatch.setattr(events, "_handlers", {})
    got: list[dict] = []
    events.on("ping", got.append)
    return got


async def test_without_redis_publish_reaches_the_handlers_in_place(settings, heard):
    settings.REDIS_URL = ""
    await events.publish({"kind": "ping", "n": 1})
    events.publish_sync({"kind": "ping", "n": 2})
    events.publish_sync({"kind": "other"})
    assert heard == [{"kind": "ping", "n": 1}, {"kind": "ping", "n": 2}]
    assert events.start() is None  # nothing to listen to


async def test_a_failing_handler_does_not_stop_the_others(settings, heard):
    settings.REDIS_URL = ""

    def broken(message):
        raise RuntimeError("boom")

    after: list[dict] = []
    events.on("ping", broken)
    events.on("ping", broken)  # registering twice is once
    events.on("ping", after.append)
    events.dispatch({"kind": "ping"})
    assert heard == after == [{"kind": "ping"}]


async def test_with_redis_every_listener_hears_a_publish(settings, heard):
    if not redis_available():
        pytest.skip("no Redis at " + TEST_REDIS)
    settings.REDIS_URL = TEST_REDIS
    settings.STUDIO_REDIS_PREFIX = f"test-events-{uuid.uuid4().hex}"
    resyncs: list[dict] = []
    events.on(events.RESYNC, resyncs.append)
    ready = asyncio.Event()
    listener = asyncio.create_task(events.listen(ready))
    try:
        await asyncio.wait_for(ready.wait(), 10)
        assert resyncs == [{"kind": "resync"}]  # told to catch up with whatever it missed
        await events.publish({"kind": "ping", "from": "async"})
        await asyncio.to_thread(events.publish_sync, {"kind": "ping", "from": "sync"})
        async with asyncio.timeout(10):
            while len(heard) < 2:
                await asyncio.sleep(0.01)
    finally:
        listener.cancel()
        with pytest.raises(asyncio.CancelledError):
            await listener
    assert sorted(m["from"] for m in heard) == ["async", "sync"]


async def test_stopping_closes_the_loop_s_kept_client(settings):
    """The client publishing on this loop keeps its connection between uses, and closes it when
    the events stop (the server's shutdown)."""
    if not redis_available():
        pytest.skip("no Redis at " + TEST_REDIS)
    import redis

    settings.REDIS_URL = TEST_REDIS
    settings.STUDIO_REDIS_PREFIX = f"test-events-{uuid.uuid4().hex}"
    await events.publish({"kind": "ping"})
    kept = events.loop_client()
    connection = await kept.client_id()
    await events.publish({"kind": "ping"})
    assert events.loop_client() is kept and await kept.client_id() == connection  # one connection, reused
    await events.stop()
    server = redis.Redis.from_url(TEST_REDIS)
    try:
        assert [c for c in server.client_list() if int(c["id"]) == connection] == []
    finally:
        server.close()
    assert events.loop_client() is not kept
    await events.stop()
