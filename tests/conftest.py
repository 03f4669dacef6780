"""Shared fixtures: a seeded catalog, users with keys, an ASGI client, a live server, query counting."""

from __future__ import annotations

import asyncio
import inspect
import io
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.STUDIO_INPROCESS_WORKER = False
    settings.STUDIO_SANDBOX_DELAY = 0  # the sandbox streams without pauses unless a test slows it
    settings.STUDIO_RECORDER_RETRY_DELAYS = (0.05, 0.2)  # a failing record must not hold drain() for minutes


@pytest.fixture(scope="session", autouse=True)
def _public_address_nobody_answers():
    """The gateway's public address in the tests: a loopback port this session holds bound but not
    listening, so a connection to it is refused at once. What posts there (the sandbox's video
    callbacks, made for ``PUBLIC_BASE_URL``) reaches no server, not one a developer runs on the
    default port."""
    from django.test import override_settings

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        with override_settings(PUBLIC_BASE_URL=f"http://127.0.0.1:{held.getsockname()[1]}"):
            yield


@pytest.fixture(scope="session", autouse=True)
def _quick_password_hashing():
    """Accounts are made by the thousand here (every ``catalog`` seeds an admin with a password):
    PBKDF2's million rounds would cost 0.23 s each. The tests' passwords go through Django's
    hashers all the same, with a cheap one; the product keeps Django's default."""
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """pytest-django's test databases, and at the end of the run, before they are dropped, the
    connections that other threads left open to them closed: the recorder's database thread,
    the sandbox's video threads and the worker keep theirs for the life of the process, and
    PostgreSQL refuses to drop a database anyone is connected to ("is being accessed by other
    users"). Only the run's own test databases are touched."""
    yield
    from django.db import connections

    with django_db_blocker.unblock():
        for alias in connections:
            connection = connections[alias]
            if connection.vendor != "postgresql":
                continue
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                               "WHERE datname = current_database() AND pid <> pg_backend_pid()")


@pytest.fixture(scope="session", autouse=True)
def _run_redis_prefix():
    """What a run keeps in Redis (spend counters, breaker counts, the worker's heartbeat) lives
    under a prefix of its own, so a run never finds an earlier run's state (a budget or an
    upstream of the same id in a database created afresh) under its keys; at the end of the run
    it goes (a budget's counter may last a year)."""
    from django.conf import settings

    run = f"test-{uuid.uuid4().hex[:12]}"
    settings.STUDIO_REDIS_PREFIX = run
    settings.STUDIO_COUNTER_PREFIX = f"{run}:spend:"
    yield

    if not settings.REDIS_URL:
        return
    import redis

    try:
        client = redis.Redis.from_url(settings.REDIS_URL)
        names = list(client.scan_iter(match=f"*{run}:*", count=1000))
        for start in range(0, len(names), 500):
            client.delete(*names[start:start + 500])
    except redis.RedisError:
        pass


@pytest.fixture(autouse=True)
def _fresh_gateway_state():
    from studio.gateway import routing, snapshot

    snapshot.invalidate()
    routing.reset_health()
    yield
    snapshot.invalidate()


@pytest.fixture(autouse=True)
def _request_log_written():
    """The request log's lines kept for a test's event loop go out with the test's output: the
    loop closes before their timer fires, and at exit the stream they were kept for (the test
    runner's capture) is closed."""
    yield
    for handler in logging.getLogger("studio.requests").handlers:
        handler.flush()


@pytest.fixture
async def _drain_records_async():
    yield
    from studio.gateway import health, recording
    from studio.sandbox import video_jobs

    await asyncio.wait_for(video_jobs.stop_callbacks(), timeout=60)
    await video_jobs.wait_renders(timeout=60)  # a render left running would write to a database gone
    await asyncio.wait_for(recording.drain(), timeout=60)
    await asyncio.wait_for(health.drain(), timeout=60)


@pytest.fixture(autouse=True)
def _drain_records(request):
    """Records are written in the background; let an async test's writes land (and the sandbox's
    callback senders stop) before teardown flushes the database (or the next test starts). Sync tests (browsers) are left alone: their
    server drains on shutdown, and an event loop around them would break Playwright's."""
    if inspect.iscoroutinefunction(getattr(request.node, "obj", None)):
        request.getfixturevalue("_drain_records_async")


@dataclass
class Account:
    user: object
    key: object
    secret: str


@pytest.fixture
def catalog(transactional_db):
    from django.core.management import call_command

    call_command("seed_demo", "--no-key", stdout=io.StringIO())


@pytest.fixture
def make_account(catalog, django_user_model):
    from studio.models import ApiKey

    def make(username: str = "alice", **key_options) -> Account:
        user = django_user_model.objects.create_user(username=username, password="pw-" + username + "-123")
        key, secret = ApiKey.issue(user, name=f"{username} key", **key_options)
        return Account(user=user, key=key, secret=secret)

    return make


@pytest.fixture
def alice(make_account) -> Account:
    return make_account("alice")


@pytest.fixture
def web():
    """Django's test client for the studio's pages (``client`` is the async /v1 client here)."""
    from django.test import Client

    return Client()


@pytest.fixture
async def client():
    """An HTTP client speaking to the ASGI application in-process. At the end the application's
    upstream client of this event loop is closed, as the server's shutdown closes it (its
    connections to a loopback vendor are not left to the garbage collector)."""
    from studio.asgi import application
    from studio.providers import http

    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=application), base_url="http://testserver", timeout=60
    ) as c:
        yield c
    await http.close_client()


@pytest.fixture
def count_queries(monkeypatch):
    """Count SQL statements from every thread (Django's own helper sees one connection only),
    those the row writer sends straight to SQLite's module included."""
    from django.db.backends import utils

    from studio.gateway import row_writes

    counter = {"n": 0, "sql": [], "params": []}
    original, run_native = utils.CursorWrapper._execute_with_wrappers, row_writes.run_native

    def note(sql, params):
        counter["n"] += 1
        counter["sql"].append(sql)
        counter["params"].append(params)

    def counting(self, sql, params, many, executor):
        note(sql, params)
        return original(self, sql, params, many, executor)

    monkeypatch.setattr(utils.CursorWrapper, "_execute_with_wrappers", counting)

    def counting_native(connection, sql, params):
        note(sql, params)
        return run_native(connection, sql, params)

    monkeypatch.setattr(row_writes, "run_native", counting_native)
    return counter


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def live_asgi(transactional_db) -> Iterator[str]:
    """The real application under uvicorn on a loopback port, in a thread of this process
    (so it shares the test database)."""
    import uvicorn

    from studio.asgi import application

    port = free_port()
    config = uvicorn.Config(application, host="127.0.0.1", port=port, lifespan="on", log_level="warning",
                            ws="websockets-sansio" if _has_sansio() else "auto")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not server.started:
        if time.time() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=30)  # its worker's last writes finish before the next test's set-up


def _has_sansio() -> bool:
    try:
        import websockets.sansio  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """A real S3 API (moto's server) on a loopback port, for the whole run."""
    from tests.s3_server import moto_server

    with moto_server() as endpoint:
        yield endpoint


@pytest.fixture
def s3_bucket(s3_endpoint, settings, monkeypatch) -> str:
    """Default storage switched to a fresh bucket on the S3 test server; the bucket's name."""
    from tests.s3_server import CREDENTIALS, new_bucket, storage_settings

    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    bucket = new_bucket(s3_endpoint)
    settings.STORAGES = {**settings.STORAGES, "default": storage_settings(s3_endpoint, bucket)}
    return bucket
