"""Several processes behave as one service: two web processes (``manage.py serve`` and ``uvicorn
studio.asgi:application``) and a worker (``manage.py run_worker``), with STUDIO_INPROCESS_WORKER=0,
on PostgreSQL, Redis and an S3 bucket (moto's server). Skipped without PostgreSQL and Redis."""

from __future__ import annotations

import io
import json
import os
import secrets
import time
import uuid
from collections import Counter
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
from django.test import override_settings

from tests.multiprocess.cluster import Cluster, Listener, wait_http
from tests.s3_server import CREDENTIALS, REGION, keys, new_bucket

DATABASE_URL = os.environ.get("DATABASE_URL", "")
REDIS_URL = os.environ.get("REDIS_URL", "")
pytestmark = [
    pytest.mark.multiprocess,
    pytest.mark.skipif(not DATABASE_URL.startswith(("postgres://", "postgresql://")) or not REDIS_URL,
                       reason="needs DATABASE_URL (PostgreSQL) and REDIS_URL"),
]
VIDEO = "/v1/alpha/video/generations"
CACHE_TTL = 20.0
IDLE_SECONDS = 30.0


def test_database_url(name: str) -> str:
    parts = urlsplit(DATABASE_URL)
    return urlunsplit(parts._replace(path="/" + name))


test_database_url.__test__ = False  # a helper, not a test


@pytest.fixture(scope="module")
def cluster(django_db_setup, django_db_blocker, s3_endpoint, tmp_path_factory):
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    created = None
    # As in production: DEBUG off with a key of its own. This process seeds the credentials and signs
    # the test sessions, so it uses the same key.
    secret_key = secrets.token_urlsafe(50)
    production = override_settings(SECRET_KEY=secret_key)
    production.enable()
    with django_db_blocker.unblock():
        if not connection.settings_dict["NAME"].startswith("test_"):
            # No test in this run asked for the database (this folder alone): set it up here.
            created = setup_databases(verbosity=0, interactive=False, aliases={"default"})
        call_command("seed_demo", "--no-key", stdout=io.StringIO())
        name = connection.settings_dict["NAME"]
    prefix = f"mp-{uuid.uuid4().hex[:8]}"
    folder = tmp_path_factory.mktemp("cluster")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO_ALLOW"))},
        **CREDENTIALS, "DATABASE_URL": test_database_url(name), "REDIS_URL": REDIS_URL, "STUDIO_REDIS_PREFIX": prefix,
        "STUDIO_S3_BUCKET": new_bucket(s3_endpoint), "STUDIO_S3_ENDPOINT_URL": s3_endpoint,
        "STUDIO_S3_REGION": REGION, "STUDIO_INPROCESS_WORKER": "0", "STUDIO_CACHE_TTL": str(CACHE_TTL),
        "STUDIO_SNAPSHOT_MAX_AGE": "600",  # within a test, only a moved revision number reloads the rows
        "STUDIO_SANDBOX_DELAY": "0.25", "STUDIO_SANDBOX_VIDEO_SECONDS": "3", "STUDIO_VIDEO_FIRST_POLL": "0.5",
        "STUDIO_VIDEO_POLL_SCALE": "0.25", "STUDIO_VIDEO_LEASE_SECONDS": "3", "STUDIO_VIDEO_CALLBACKS": "0",
        "STUDIO_SANDBOX_RENDER_LEASE": "3",
        "STUDIO_VIDEO_WEBHOOK_BACKOFF": "0.2", "STUDIO_FETCH_ALLOW_PRIVATE": "1", "DB_CONN_MAX_AGE": "0",
        "PYTHONUNBUFFERED": "1", "SECRET_KEY": secret_key, "DEBUG": "0",
        # One folder for every process's metrics: any web process answers /metrics for all of them.
        "PROMETHEUS_MULTIPROC_DIR": str(folder / "prometheus"), "STUDIO_READY_WORKER_SECONDS": "10",
    }
    cluster = Cluster(env=env, folder=folder)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        production.disable()
        with django_db_blocker.unblock():
            call_command("flush", "--no-input", stdout=io.StringIO())
            if created is not None:
                teardown_databases(created, verbosity=0)
        import redis

        client = redis.Redis.from_url(REDIS_URL)
        for key in client.scan_iter(f"{prefix}:*"):
            client.delete(key)


@pytest.fixture(scope="module")
def account(cluster, django_db_blocker):
    """A user with a key and a signed-in session (made in the shared database)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from studio.models import ApiKey

    with django_db_blocker.unblock():
        user = get_user_model().objects.create_user(f"mp-{uuid.uuid4().hex[:6]}", password="pw-multiprocess-1")
        key, secret = ApiKey.issue(user, name="multiprocess")
        web = Client()
        web.force_login(user)
        session = web.cookies["sessionid"].value
    return {"user": user, "key": key, "secret": secret, "session": session}


@pytest.fixture(scope="module")
def idle_socket(cluster, account):
    """A studio socket on web-1, opened as soon as the servers are up and then left idle."""
    from websockets.sync.client import connect

    socket = connect(cluster.web1.replace("http", "ws") + "/ws/studio/", origin=cluster.web1,
                     additional_headers={"Cookie": f"sessionid={account['session']}"}, open_timeout=20)
    opened = time.monotonic()
    yield socket, opened
    socket.close()


def studio_socket(base: str, session: str):
    from websockets.sync.client import connect

    return connect(base.replace("http", "ws") + "/ws/studio/", origin=base,
                   additional_headers={"Cookie": f"sessionid={session}"}, open_timeout=20)


def receive_until(socket, kinds: set[str], timeout: float = 60.0) -> list[dict]:
    events, deadline = [], time.monotonic() + timeout
    while True:
        event = json.loads(socket.recv(timeout=max(deadline - time.monotonic(), 0.1)))
        events.append(event)
        if event["type"] in kinds:
            return events


GENERATE = {"action": "generate", "ref": "mp", "model": "delta-3-pro-image", "prompt": "a lighthouse at dusk",
            "options": {"aspect_ratio": "16:9", "image_size": "1K"}}
END = {"job.completed", "job.failed"}


def test_live_frames_of_a_job_on_web2_reach_a_socket_on_web1_and_its_media_is_served_by_web1(
        cluster, account, idle_socket):
    with studio_socket(cluster.web2, account["session"]) as starter, \
            studio_socket(cluster.web1, account["session"]) as follower:
        starter.send(json.dumps(GENERATE))
        accepted = receive_until(starter, {"job.accepted", "job.rejected"})[-1]
        assert accepted["type"] == "job.accepted", accepted
        job_id = accepted["id"]
        follower.send(json.dumps({"action": "subscribe", "job": job_id, "after": 0}))
        seen_on_web1 = receive_until(follower, END)
        started_events = receive_until(starter, END)
    job_events = [e for e in seen_on_web1 if e.get("id") == job_id]
    assert job_events[-1]["type"] == "job.completed"
    seqs = [e["seq"] for e in job_events]
    assert seqs == sorted(set(seqs))
    # Everything web-2's own socket saw arrived on web-1 too, through Redis.
    assert {e["seq"] for e in started_events if e.get("id") == job_id} <= set(seqs)
    images = [e for e in job_events if e["type"] == "job.image" and not e["data"]["thought"]]
    assert images and images[0]["data"]["url"].startswith("/assets/")
    # Written by web-2 (into the bucket), served by web-1 to the owner.
    url = images[0]["data"]["url"]
    served = httpx.get(cluster.web1 + url, cookies={"sessionid": account["session"]}, timeout=30)
    assert served.status_code == 200 and served.headers["content-type"].startswith("image/")
    assert len(served.content) == int(served.headers["content-length"]) > 1000
    assert httpx.get(cluster.web2 + url, timeout=30).status_code in (302, 404)  # not for anonymous visitors


def create_video(base: str, secret: str, callback: str, prompt: str) -> str:
    body = {"model": "alpha-2.0-fast", "content": [{"type": "text", "text": prompt}], "resolution": "480p",
            "duration": 4, **({"callback_url": callback} if callback else {})}
    response = httpx.post(base + VIDEO, json=body, headers={"Authorization": f"Bearer {secret}"}, timeout=60)
    assert response.status_code == 200, response.text
    return response.json()["id"]


def statuses(base: str, secret: str, task_ids: list[str]) -> dict[str, dict]:
    return {task_id: httpx.get(f"{base}{VIDEO}/{task_id}", headers={"Authorization": f"Bearer {secret}"},
                               timeout=30).json() for task_id in task_ids}


def wait_terminal(base: str, secret: str, task_ids: list[str], timeout: float = 90.0) -> dict[str, dict]:
    deadline = time.monotonic() + timeout
    while True:
        records = statuses(base, secret, task_ids)
        if all(r["status"] in ("succeeded", "failed", "expired", "cancelled") for r in records.values()):
            return records
        assert time.monotonic() < deadline, records
        time.sleep(0.3)


def wait_deliveries(django_db_blocker, task_ids: list[str], timeout: float = 60.0) -> None:
    from studio.models import WebhookDelivery

    deadline = time.monotonic() + timeout
    with django_db_blocker.unblock():
        while WebhookDelivery.objects.filter(task_id__in=task_ids, delivered_at__isnull=True).exists():
            assert time.monotonic() < deadline, "webhooks were not all delivered"
            time.sleep(0.2)


def test_a_video_created_on_web1_completes_through_the_worker_and_web2_serves_it(cluster, account,
                                                                                   django_db_blocker):
    listener = Listener()
    try:
        task_id = create_video(cluster.web1, account["secret"], listener.url, "a paper boat on a pond")
        record = wait_terminal(cluster.web2, account["secret"], [task_id])[task_id]
        wait_deliveries(django_db_blocker, [task_id])
    finally:
        listener.close()
    assert record["status"] == "succeeded", record
    video_url = urlsplit(record["content"]["video_url"])
    served = httpx.get(cluster.web2 + video_url.path + "?" + video_url.query, headers={"Range": "bytes=0-15"},
                       timeout=30)
    assert served.status_code == 206 and served.content[4:8] == b"ftyp"
    assert [item["status"] for item in listener.received][0] == "queued"
    assert [item["status"] for item in listener.received][-1] == "succeeded"
    assert all(count == 1 for count in listener.counts().values()), [(i["delivery"], i["status"]) for i in listener.received]
    stored = keys(cluster.env["STUDIO_S3_ENDPOINT_URL"], cluster.env["STUDIO_S3_BUCKET"])
    assert any(k.startswith("sandbox/video/") for k in stored) and any(k.endswith(".mp4") and
                                                                       k.startswith("assets/") for k in stored)


def test_a_worker_killed_mid_task_and_restarted_completes_each_task_and_delivers_each_callback(cluster, account,
                                                                                                  django_db_blocker):
    from studio.models import Asset, VideoTask, WebhookDelivery

    listener = Listener()
    try:
        task_ids = [create_video(cluster.web1, account["secret"], listener.url, f"lanterns {n}") for n in range(3)]
        deadline = time.monotonic() + 30
        while not any(r["status"] == "running" for r in statuses(cluster.web2, account["secret"], task_ids).values()):
            assert time.monotonic() < deadline, "no task started running"
            time.sleep(0.1)
        cluster.procs["worker"].kill_hard()  # mid-task: leases held, nothing finished
        time.sleep(1.0)
        cluster.restart_worker()
        records = wait_terminal(cluster.web2, account["secret"], task_ids)
        wait_deliveries(django_db_blocker, task_ids)
        time.sleep(0.5)  # a duplicate, if any, would arrive now
    finally:
        listener.close()
    assert all(r["status"] == "succeeded" for r in records.values()), records
    with django_db_blocker.unblock():
        rows = {t.id: t for t in VideoTask.objects.filter(id__in=task_ids)}
        expected = Counter(f"{d.task_id}:{d.seq}" for d in WebhookDelivery.objects.filter(task_id__in=task_ids))
        for task_id in task_ids:
            mirrored = Asset.objects.filter(metadata__video_task=task_id, metadata__role="video").count()
            assert mirrored == 1 and rows[task_id].video_id is not None
    counts = listener.counts()
    assert set(counts) == set(expected)  # every change was delivered
    # A callback the killed worker had sent but not yet marked delivered is sent once more, with the
    # same X-Studio-Delivery id (the receiver's key to drop it); nothing else comes twice.
    assert all(n <= 2 for n in counts.values()), counts
    assert sum(n - 1 for n in counts.values()) <= len(task_ids), counts
    for task_id in task_ids:
        seen: dict[str, str] = {}
        for item in listener.received:
            if item["task"] == task_id:
                seen.setdefault(item["delivery"], item["status"])
        sent = list(seen.values())
        assert sent[0] == "queued" and sent.count("succeeded") == 1 and sent[-1] == "succeeded", sent


def _key_web2_accepts(cluster, account, django_db_blocker, name: str):
    """A new key of the account's user, once web-2 accepts it; returns it with its headers."""
    from studio.models import ApiKey

    with django_db_blocker.unblock():
        key, secret = ApiKey.issue(account["user"], name=name)
    headers = {"Authorization": f"Bearer {secret}"}
    deadline = time.monotonic() + 10
    while httpx.get(cluster.web2 + "/v1/models", headers=headers, timeout=10).status_code != 200:
        assert time.monotonic() < deadline, "web-2 never accepted the new key"
        time.sleep(0.2)
    return key, headers


def test_a_key_revoked_through_web1_is_refused_by_web2_within_the_cache_ttl(cluster, account, django_db_blocker):
    key, headers = _key_web2_accepts(cluster, account, django_db_blocker, "to revoke")
    page = httpx.Client(base_url=cluster.web1, cookies={"sessionid": account["session"]}, timeout=30)
    page.get("/keys/")
    token = page.cookies.get("csrftoken")
    assert token, "the keys page set no CSRF cookie"
    revoked = page.post(f"/keys/{key.id}/revoke", headers={"X-CSRFToken": token, "Referer": cluster.web1 + "/keys/"})
    assert revoked.status_code in (302, 303), revoked.text[:500]
    started = time.monotonic()
    while httpx.get(cluster.web2 + "/v1/models", headers=headers, timeout=10).status_code == 200:
        assert time.monotonic() - started < CACHE_TTL, "web-2 kept accepting the revoked key"
        time.sleep(0.05)
    took = time.monotonic() - started
    assert took < 3.0, f"refused after {took:.2f}s: the change was not announced to web-2"


def test_a_key_revoked_where_no_announcement_reaches_the_web_processes_is_refused_after_the_check(
        cluster, account, django_db_blocker):
    """Revoked from a process that announces on another Redis prefix (this one), as from a
    machine whose announcement never arrives: the web processes find the moved revision number on
    their next check (the longest age between full loads is set far off)."""
    key, headers = _key_web2_accepts(cluster, account, django_db_blocker, "revoked quietly")
    with django_db_blocker.unblock():
        key.revoked = True
        key.save()
    started = time.monotonic()
    for web in (cluster.web1, cluster.web2):
        while httpx.get(web + "/v1/models", headers=headers, timeout=10).status_code == 200:
            assert time.monotonic() - started < CACHE_TTL + 10, f"{web} kept accepting the revoked key"
            time.sleep(0.2)


def test_an_idle_socket_stays_open_for_30_seconds_on_redis(cluster, account, idle_socket):
    socket, opened = idle_socket
    remaining = IDLE_SECONDS + 1 - (time.monotonic() - opened)
    if remaining > 0:
        time.sleep(remaining)
    with studio_socket(cluster.web2, account["session"]) as starter:
        starter.send(json.dumps(GENERATE))
        accepted = receive_until(starter, {"job.accepted", "job.rejected"})[-1]
        assert accepted["type"] == "job.accepted"
        socket.send(json.dumps({"action": "subscribe", "job": accepted["id"], "after": 0}))
        events = receive_until(socket, END)
    assert events[-1]["type"] == "job.completed" and time.monotonic() - opened >= IDLE_SECONDS


def metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample in the Prometheus text format (0 when absent)."""
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        if line.startswith("#") or " " not in line:
            continue
        sample, value = line.rsplit(" ", 1)
        sample_name, _, rest = sample.partition("{")
        if sample_name == name and ",".join(sorted(rest.rstrip("}").split(","))) == wanted:
            return float(value)
    return 0.0


def scrape(base: str) -> str:
    response = httpx.get(base + "/metrics", timeout=30)
    assert response.status_code == 200, response.text
    return response.text


def chat(base: str, secret: str, request_id: str | None = None) -> httpx.Response:
    body = {"model": "omicron-4-mini", "messages": [{"role": "user", "content": "a haiku about tides"}]}
    headers = {"Authorization": f"Bearer {secret}", **({"X-Request-Id": request_id} if request_id else {})}
    return httpx.post(base + "/v1/chat/completions", json=body, headers=headers, timeout=60)


def test_both_web_processes_are_ready_and_see_the_worker_heartbeat(cluster):
    for base in (cluster.web1, cluster.web2):
        assert httpx.get(base + "/healthz", timeout=10).json() == {"status": "ok"}
        deadline = time.monotonic() + 30
        while (response := httpx.get(base + "/readyz", timeout=30)).status_code != 200:
            assert time.monotonic() < deadline, response.text  # the worker's first beat may be a moment away
            time.sleep(0.5)
        checks = response.json()["checks"]
        assert set(checks) == {"database", "migrations", "cache", "storage", "worker", "channel_layer"}
        assert all(check["ok"] for check in checks.values()), checks


def test_a_request_id_round_trips_through_either_process(cluster, account):
    for n, base in enumerate((cluster.web1, cluster.web2)):
        response = chat(base, account["secret"], request_id=f"mp-trace-{n}")
        assert response.status_code == 200, response.text
        assert response.headers["x-request-id"] == f"mp-trace-{n}"
        assert "server" not in response.headers  # the stack is not named to callers
    assert len(chat(cluster.web2, account["secret"], request_id="bad id!").headers["x-request-id"]) == 32


def test_a_response_stored_by_web1_is_continued_on_web2_at_once(cluster, account):
    """web-1's recorder may hold the stored response for its linger; web-2, asked at once to
    continue it, looks again after that long instead of answering that it does not exist."""
    headers = {"Authorization": f"Bearer {account['secret']}"}
    first = httpx.post(cluster.web1 + "/v1/responses", headers=headers, timeout=60,
                       json={"model": "omicron-4-mini", "input": "the secret word is tangerine"})
    assert first.status_code == 200, first.text
    follow = httpx.post(cluster.web2 + "/v1/responses", headers=headers, timeout=60, json={
        "model": "omicron-4-mini", "input": "what was the secret word?", "previous_response_id": first.json()["id"]})
    assert follow.status_code == 200, follow.text
    items = httpx.get(f"{cluster.web2}/v1/responses/{first.json()['id']}/input_items", headers=headers, timeout=60)
    assert items.status_code == 200, items.text
    assert items.json()["data"][0]["content"][0]["text"] == "the secret word is tangerine"


def test_metrics_of_every_process_are_summed_by_either_web_process(cluster, account, idle_socket):
    labels = {"family": "openai", "model": "omicron-4-mini", "upstream": "Sandbox", "status": "200"}
    time.sleep(1.5)  # each process hands its request metrics to the shared folder at least once a second
    before = metric(scrape(cluster.web1), "studio_requests_total", **labels)
    for _ in range(3):
        assert chat(cluster.web1, account["secret"]).status_code == 200
    for _ in range(2):
        assert chat(cluster.web2, account["secret"]).status_code == 200
    task_id = create_video(cluster.web2, account["secret"], "", "a metronome")
    assert wait_terminal(cluster.web1, account["secret"], [task_id])[task_id]["status"] == "succeeded"
    deadline = time.monotonic() + 10
    while True:
        one, two = scrape(cluster.web1), scrape(cluster.web2)
        counted = (metric(one, "studio_requests_total", **labels), metric(two, "studio_requests_total", **labels))
        if counted == (before + 5, before + 5) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert counted == (before + 5, before + 5)
    # Counted by the worker process, read through a web process.
    assert metric(two, "studio_video_tasks_finished_total", model="alpha-2.0-fast", state="succeeded") >= 1
    assert metric(one, "studio_websocket_connections") >= 1  # the idle socket on web-1


def restart_web(cluster: Cluster, name: str) -> None:
    cluster.procs[name].start()
    wait_http((cluster.web1 if name == "web1" else cluster.web2) + "/login/", cluster.procs[name])


def test_a_web_process_killed_with_tasks_in_flight_leaves_each_task_and_callback_done_once(cluster, account,
                                                                                            django_db_blocker):
    from studio.models import ApiKey, UsageRecord, VideoTask, WebhookDelivery

    with django_db_blocker.unblock():
        key, secret = ApiKey.issue(account["user"], name="web killed")
    listener = Listener()
    try:
        task_ids = [create_video(cluster.web1, secret, listener.url, f"fireflies {n}") for n in range(4)]
        cluster.procs["web1"].kill_hard()  # the process that took the tasks is gone, nothing shut down
        # The other web process answers for every task meanwhile.
        seen = statuses(cluster.web2, secret, task_ids)
        assert all(r["id"] == task_id and r["status"] in ("queued", "running", "succeeded")
                   for task_id, r in seen.items()), seen
        records = wait_terminal(cluster.web2, secret, task_ids)
        wait_deliveries(django_db_blocker, task_ids)
        restart_web(cluster, "web1")
        again = statuses(cluster.web1, secret, task_ids)
        time.sleep(0.5)  # a duplicate, if any, would arrive now
    finally:
        listener.close()
    assert all(r["status"] == "succeeded" for r in records.values()), records
    assert {t: r["status"] for t, r in again.items()} == {t: "succeeded" for t in task_ids}
    with django_db_blocker.unblock():
        rows = VideoTask.objects.filter(id__in=task_ids)
        assert all(row.settled and row.finished_at is not None for row in rows)
        charged = UsageRecord.objects.filter(api_key=key, route__startswith="video.")
        assert charged.count() == len(task_ids) and all(r.cost_usd > 0 for r in charged)
        expected = Counter(f"{d.task_id}:{d.seq}" for d in WebhookDelivery.objects.filter(task_id__in=task_ids))
    # Every change arrives. Only a change the killed process had sent without recording the client's
    # 2xx yet can arrive again (at least once): under the same delivery id and body, so a client that
    # deduplicates on X-Studio-Delivery sees each change exactly once, in order.
    counts = listener.counts()
    assert set(counts) == set(expected), (counts, expected)
    repeated = {delivery for delivery, n in counts.items() if n > 1}
    assert all(counts[d] == 2 for d in repeated), counts
    # At most the one change per task that web-1 was sending when it died.
    assert all(n == 1 for n in Counter(d.rpartition(":")[0] for d in repeated).values()), counts
    for delivery in repeated:
        copies = [item for item in listener.received if item["delivery"] == delivery]
        assert copies[0]["body"] == copies[1]["body"] and copies[0]["status"] == copies[1]["status"]
    for task_id in task_ids:
        firsts = {}
        for item in listener.received:
            if item["task"] == task_id:
                firsts.setdefault(item["delivery"], item["status"])
        sent = list(firsts.values())
        assert sent[0] == "queued" and sent.count("succeeded") == 1 and sent[-1] == "succeeded", sent


def test_a_web_process_killed_mid_stream_leaves_the_other_serving_and_records_nothing_twice(cluster, account,
                                                                                           django_db_blocker):
    from studio.models import ApiKey, UsageRecord

    with django_db_blocker.unblock():
        key, secret = ApiKey.issue(account["user"], name="stream killed")
    body = {"model": "omicron-4-mini", "stream": True, "messages": [{"role": "user", "content": "count to 300"}]}
    headers = {"Authorization": f"Bearer {secret}"}
    with httpx.stream("POST", cluster.web2 + "/v1/chat/completions", json=body, headers=headers,
                      timeout=30) as response:
        assert response.status_code == 200
        lines = response.iter_lines()
        assert any(line.startswith("data: {") for line in lines)
        cluster.procs["web2"].kill_hard()  # mid-answer
        with pytest.raises(httpx.HTTPError):
            for line in lines:
                assert line != "data: [DONE]", "the stream finished before the process was killed"
    finished = chat(cluster.web1, secret)
    assert finished.status_code == 200, finished.text
    restart_web(cluster, "web2")
    tokens = finished.json()["usage"]["completion_tokens"]
    with django_db_blocker.unblock():
        deadline = time.monotonic() + 15
        while not UsageRecord.objects.filter(api_key=key, output_tokens=tokens).exists():
            assert time.monotonic() < deadline, "the finished request was never recorded"
            time.sleep(0.2)
        time.sleep(1.0)  # a second record, if any, would land now
        rows = list(UsageRecord.objects.filter(api_key=key))
    assert len([r for r in rows if r.output_tokens == tokens]) == 1
    assert len(rows) <= 2, [(r.route, r.status_code, r.output_tokens) for r in rows]  # one per request at most
