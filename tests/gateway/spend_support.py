"""Shared fixtures for spend tests: counters in memory or in Redis (own prefix per test)."""

from __future__ import annotations

import os
import uuid

import pytest

TEST_REDIS = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/5"


def redis_available(url: str = TEST_REDIS) -> bool:
    try:
        import redis

        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except Exception:
        return False
    return True


@pytest.fixture(params=["memory", "redis"])
def backend(request, settings) -> str:
    from studio.gateway import counters

    if request.param == "redis":
        if not redis_available():
            pytest.skip("no Redis at " + TEST_REDIS)
        settings.REDIS_URL = TEST_REDIS
    else:
        settings.REDIS_URL = ""
    settings.STUDIO_COUNTER_PREFIX = f"test-spend:{uuid.uuid4().hex}:"
    counters.reset_memory()
    return request.param
