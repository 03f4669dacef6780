"""/healthz, /readyz and /metrics as an operator's probes and scraper see them."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from studio.gateway import heartbeat, metrics
from studio.web import ops_views

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def worker_beat():
    cache.set(heartbeat._key(), time.time(), timeout=60)
    yield
    cache.clear()


async def test_healthz_answers_without_touching_anything(client, count_queries):
    response = await client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}
    assert count_queries["n"] == 0


async def test_readyz_names_every_check_and_is_ready_with_a_fresh_worker_heartbeat(client, worker_beat):
    response = await client.get("/readyz")
    body = response.json()
    assert response.status_code == 200, body
    assert body["ready"] is True
    assert set(body["checks"]) == {"database", "migrations", "cache", "storage", "worker", "channel_layer"}
    assert all(check["ok"] for check in body["checks"].values())


async def test_readyz_is_503_naming_the_worker_when_no_heartbeat_was_seen(client):
    cache.clear()
    response = await client.get("/readyz")
    body = response.json()
    assert response.status_code == 503 and body["ready"] is False
    assert body["checks"]["worker"]["ok"] is False and "heartbeat" in body["checks"]["worker"]["detail"]
    assert body["checks"]["database"]["ok"] is True


async def test_readyz_is_503_when_the_heartbeat_is_too_old(client, settings):
    settings.STUDIO_READY_WORKER_SECONDS = 10
    cache.set(heartbeat._key(), time.time() - 60, timeout=60)
    response = await client.get("/readyz")
    assert response.status_code == 503
    assert "s old" in response.json()["checks"]["worker"]["detail"]


async def test_a_worker_beat_makes_readyz_ready():
    cache.clear()
    assert heartbeat.age() is None
    await heartbeat.beat()
    assert heartbeat.age() < 5


async def test_readyz_is_503_when_the_database_is_unreachable(client, worker_beat, monkeypatch):
    def broken() -> str:
        raise ConnectionError("connection refused")

    monkeypatch.setitem(ops_views.SYNC_CHECKS, "database", broken)
    response = await client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["database"] == {"ok": False, "detail": "ConnectionError: connection refused",
                                                     "ms": response.json()["checks"]["database"]["ms"]}


async def test_readyz_is_503_when_a_migration_is_not_applied(client, worker_beat, monkeypatch):
    from django.db.migrations.executor import MigrationExecutor

    monkeypatch.setattr(ops_views._Migrated, "done", False)
    monkeypatch.setattr(MigrationExecutor, "migration_plan", lambda self, targets: [("studio.0099_next", False)])
    response = await client.get("/readyz")
    assert response.status_code == 503
    assert "not applied" in response.json()["checks"]["migrations"]["detail"]


def test_metrics_answer_loopback_clients_in_the_prometheus_format(web):
    response = web.get("/metrics", REMOTE_ADDR="127.0.0.1")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    text = response.content.decode()
    for name in ("studio_requests_total", "studio_request_duration_seconds", "studio_video_tasks",
                 "studio_video_oldest_due_seconds", "studio_websocket_connections"):
        assert name in text


def test_metrics_refuse_other_clients_without_a_token(web):
    assert web.get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 403


def test_metrics_want_the_bearer_token_when_one_is_set(web, settings):
    settings.STUDIO_METRICS_TOKEN = "scrape-token-1"
    assert web.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 401
    assert web.get("/metrics", REMOTE_ADDR="127.0.0.1", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    ok = web.get("/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION="Bearer scrape-token-1")
    assert ok.status_code == 200 and b"studio_requests_total" in ok.content


def test_metrics_can_be_turned_off(web, settings):
    settings.STUDIO_METRICS = False
    assert web.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 404


def value(text: str, line_start: str) -> float:
    for line in text.splitlines():
        if line.startswith(line_start):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{line_start} not in metrics")


def test_video_tasks_by_state_and_the_oldest_due_one_are_read_at_scrape_time(web, alice):
    from studio.models import Upstream, VideoTask

    upstream = Upstream.objects.get(protocol="sandbox")
    now = timezone.now()
    for status, due in (("queued", now - timedelta(seconds=120)), ("running", now - timedelta(seconds=5)),
                        ("running", now + timedelta(seconds=60)), ("succeeded", now - timedelta(seconds=900))):
        VideoTask.objects.create(user=alice.user, protocol="ark", model_id="alpha-2.0", upstream=upstream,
                                 upstream_protocol="ark", upstream_model="m", upstream_task_id="t", status=status,
                                 next_poll_at=due, expires_at=now + timedelta(hours=1))
    text = web.get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()
    assert value(text, 'studio_video_tasks{state="queued"}') == 1
    assert value(text, 'studio_video_tasks{state="running"}') == 2
    assert 115 <= value(text, "studio_video_oldest_due_seconds") < 600


async def test_an_open_breaker_shows_in_the_metrics(alice):
    from asgiref.sync import sync_to_async

    from studio.gateway import health, snapshot

    snap = await snapshot.get()
    up = next(iter(snap.upstreams.values()))
    for _ in range(health.FAILURES_TO_OPEN):
        health.view.failed(up.id)
    text = (await sync_to_async(metrics.exposition)()).decode()
    assert value(text, f'studio_upstream_breaker_open{{upstream="{up.name}"}}') == 1
    assert value(text, f'studio_upstream_consecutive_failures{{upstream="{up.name}"}}') == health.FAILURES_TO_OPEN
