"""The counters' lean Redis connection: replies, errors, and starting afresh after a failure."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from redis.exceptions import NoScriptError, ResponseError

from studio.gateway.redis_link import Link, pack
from tests.gateway.spend_support import TEST_REDIS, redis_available

pytestmark = pytest.mark.skipif(not redis_available(), reason="no Redis at " + TEST_REDIS)


async def test_replies_come_back_in_the_database_of_the_url():
    import redis

    key = f"test-link:{uuid.uuid4().hex}"
    link = Link(TEST_REDIS, timeout=5)
    try:
        assert await link.call(pack("SET", key, 41, "EX", 60)) == b"OK"
        assert await link.call(pack("INCRBY", key, 1)) == 42
        assert await link.call(pack("EVAL", "return {1, {2, 3}}", 0)) == [1, [2, 3]]
    finally:
        link.close()
    assert redis.Redis.from_url(TEST_REDIS).get(key) == b"42"  # the same database as redis-py's


async def test_redis_errors_are_raised_as_redis_pys():
    link = Link(TEST_REDIS, timeout=5)
    try:
        with pytest.raises(NoScriptError):
            await link.call(pack("EVALSHA", "0" * 40, 0))
        with pytest.raises(ResponseError):
            await link.call(pack("INCRBY", "x", "not a number"))
        assert await link.call(pack("PING")) == b"PONG"  # still in step after an error
    finally:
        link.close()


async def test_a_lost_or_silent_connection_fails_the_call_and_the_next_one_reconnects():
    link = Link(TEST_REDIS, timeout=0.2)
    try:
        assert await link.call(pack("PING")) == b"PONG"
        link.close()  # as if Redis had gone away
        assert await link.call(pack("PING")) == b"PONG"
        with pytest.raises(TimeoutError):
            await link.call(pack("BLPOP", f"test-link:{uuid.uuid4().hex}", 1))  # no reply within the timeout
        assert await link.call(pack("PING")) == b"PONG"  # not the late reply of the blocked call
    finally:
        link.close()
    await asyncio.sleep(0)


def test_it_runs_on_uvloop_too():
    uvloop = pytest.importorskip("uvloop")

    async def ping() -> bytes:
        link = Link(TEST_REDIS, timeout=5)
        try:
            return await link.call(pack("PING"))
        finally:
            link.close()

    assert uvloop.run(ping()) == b"PONG"
