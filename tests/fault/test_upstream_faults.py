"""Upstream faults at the HTTP boundary (a real loopback server): refused connections, 500s, a hang
before the first byte, a death mid-stream. Each is a typed error in the client's format, fails
over while nothing was sent, trips and half-opens the breaker, and is recorded once at most.
"""

from __future__ import annotations

import time

import orjson
import pytest

from tests.fault import tally
from tests.fault.conftest import is_family_error
from tests.fault.vendor import FaultyVendor, closed_port

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.fault]

MODEL = "omicron-4-mini"
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "hello"}]}
MESSAGES = {"model": MODEL, "max_tokens": 16, "messages": [{"role": "user", "content": "hello"}]}


@pytest.fixture
def faulty(catalog, settings):
    from studio.gateway import snapshot
    from studio.models import Upstream

    settings.STUDIO_UPSTREAM_DEADLINES = {**settings.STUDIO_UPSTREAM_DEADLINES,
                                          "text": {"connect": 1.0, "first_byte": 0.5, "total": 3.0}}
    vendor, backup = FaultyVendor(), FaultyVendor()
    rows = []
    for name, server, priority in (("Faulty", vendor, 1000), ("Backup", backup, 500)):
        row = Upstream(name=name, protocol="openai", base_url=server.base_url, priority=priority,
                       model_map={MODEL: "vendor-model"})
        row.credential = f"sk-{name}"
        row.save()
        rows.append(row)
    snapshot.invalidate()
    yield vendor, rows[0], backup, rows[1]
    vendor.close()
    backup.close()


async def _use(row, vendor: FaultyVendor, mode: str) -> None:
    from studio.gateway import snapshot

    vendor.mode = mode
    base = f"http://127.0.0.1:{closed_port()}/v1" if mode == "refuse" else vendor.base_url
    if row.base_url != base:
        row.base_url = base
        await row.asave()
        snapshot.invalidate()


async def _usage_count() -> int:
    from studio.gateway import recording
    from studio.models import UsageRecord

    await recording.drain()
    return await UsageRecord.objects.acount()


@pytest.mark.parametrize("mode", ["refuse", "500", "hang"])
async def test_a_failing_upstream_fails_over_before_anything_is_sent(client, alice, faulty, mode):
    vendor, row, backup, _ = faulty
    await _use(row, vendor, mode)
    response = await client.post("/v1/chat/completions", json=CHAT, headers={"Authorization": f"Bearer {alice.secret}"})
    tally.add("fault scenarios")
    tally.add("requests tried")
    assert response.status_code == 200, response.text  # answered by the next real upstream
    assert response.json()["choices"][0]["message"]["content"] == "hi" and len(backup.requests) == 1
    assert await _usage_count() == 1


EXPECTED = {"refuse": 503, "500": 502, "hang": 504}


@pytest.mark.parametrize("mode", ["refuse", "500", "hang"])
@pytest.mark.parametrize(("url", "body", "family", "headers"), [
    ("/v1/chat/completions", CHAT, "openai", lambda s: {"Authorization": f"Bearer {s}"}),
    ("/v1/messages", MESSAGES, "messages", lambda s: {"x-api-key": s, "anthropic-version": "2023-06-01"}),
])
async def test_with_no_other_upstream_each_fault_is_a_typed_error_and_trips_the_breaker(
        client, alice, faulty, mode, url, body, family, headers):
    from studio.gateway import health
    from studio.models import Upstream

    vendor, row, _, backup_row = faulty
    await Upstream.objects.filter(id=backup_row.id).aupdate(enabled=False)
    await _use(row, vendor, mode)
    for _ in range(health.FAILURES_TO_OPEN):
        response = await client.post(url, json=body, headers=headers(alice.secret))
        tally.add("fault scenarios")
        tally.add("requests tried")
        assert response.status_code == EXPECTED[mode], response.text
        assert is_family_error(family, response.json()), response.text
    assert health.view.is_open(row.id)
    assert await _usage_count() <= health.FAILURES_TO_OPEN  # a failed call is recorded once, or not at all

    # Half-open: once the open period is over the upstream is tried again, and a success closes it.
    health.view.open_until[row.id] = time.time() - 1
    await _use(row, vendor, "ok")
    response = await client.post(url, json=body, headers=headers(alice.secret))
    assert response.status_code == 200, response.text
    assert not health.view.is_open(row.id) and health.view.failures.get(row.id) is None


async def test_an_upstream_dying_mid_stream_ends_the_stream_with_an_error_recorded_once(client, alice, faulty):
    from studio.models import Upstream

    vendor, row, _, backup_row = faulty
    await Upstream.objects.filter(id=backup_row.id).aupdate(enabled=False)
    await _use(row, vendor, "die")
    response = await client.post("/v1/chat/completions", json={**CHAT, "stream": True},
                                 headers={"Authorization": f"Bearer {alice.secret}"})
    tally.add("fault scenarios")
    tally.add("requests tried")
    assert response.status_code == 200  # the stream had started: the error comes inside it
    frames = [line[6:] for line in response.text.split("\n") if line.startswith("data: ")]
    assert any('"hel"' in f for f in frames)
    errors = [orjson.loads(f) for f in frames if f.startswith("{") and '"error"' in f]
    assert errors and is_family_error("openai", errors[-1]), response.text
    records = await _usage_count()
    if records > 1:
        tally.add("records written twice")
    assert records <= 1
