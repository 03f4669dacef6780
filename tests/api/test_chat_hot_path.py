"""The text hot path: no database query and no thread hop between the request and the answer;
the first frame reaches the client as soon as the upstream sends it."""

from __future__ import annotations

import time

import httpx
import pytest
from asgiref.sync import SyncToAsync

from studio.gateway import snapshot, text_engine
from studio.gateway.principal import authenticate
from studio.providers.asgi_transport import StreamingASGITransport

pytestmark = pytest.mark.django_db(transaction=True)

CASES = [
    ("/v1/chat/completions", "chat", {"model": "omicron-4-mini", "messages": [{"role": "user", "content": "hi"}]}),
    ("/v1/chat/completions", "chat", {"model": "epsilon-4.5", "messages": [{"role": "user", "content": "hi"}]}),
    ("/v1/messages", "messages", {"model": "epsilon-4.5", "max_tokens": 9,
                                  "messages": [{"role": "user", "content": "hi"}]}),
    ("/v1/responses", "responses", {"model": "omicron-4-mini", "input": "hi"}),
    ("/v1/responses", "responses", {"model": "epsilon-4.5", "input": "hi"}),
]


@pytest.fixture
def held_records(monkeypatch):
    """Keep records in memory so only the request path's own queries are counted."""
    held = []
    monkeypatch.setattr("studio.gateway.text_record.recording.submit", held.append)
    return held


@pytest.mark.parametrize(("path", "fmt", "body"), CASES)
@pytest.mark.parametrize("stream", [False, True])
async def test_no_database_query(client, alice, count_queries, held_records, path, fmt, body, stream):
    await snapshot.get()
    count_queries["n"], count_queries["sql"] = 0, []
    headers = {"Authorization": f"Bearer {alice.secret}", "epsilon-version": "2023-06-01"}
    response = await client.post(path, headers=headers, json={**body, "stream": stream})
    assert response.status_code == 200, response.text
    assert count_queries["n"] == 0, count_queries["sql"]
    assert len(held_records) == 1 and held_records[0].route == fmt and held_records[0].output_tokens == 3


@pytest.mark.parametrize(("fmt", "body"), [(fmt, body) for _, fmt, body in CASES])
async def test_no_thread_hop_in_the_engine(alice, monkeypatch, held_records, fmt, body):
    import orjson

    hops = []
    original = SyncToAsync.__call__

    async def counting(self, *args, **kwargs):
        hops.append(self.func)
        return await original(self, *args, **kwargs)

    principal = authenticate(await snapshot.get(), alice.secret)
    monkeypatch.setattr(SyncToAsync, "__call__", counting)
    call = await text_engine.prepare(principal, fmt, orjson.dumps({**body, "stream": True}))
    frames = [frame async for frame in text_engine.stream(call)]
    assert frames and not hops, hops


async def test_first_frame_relayed_before_the_upstream_finishes(alice, monkeypatch):
    """With the sandbox pausing between words, the first chunk arrives long before the last."""
    from studio.asgi import application

    monkeypatch.setenv("STUDIO_SANDBOX_DELAY", "0.25")  # 50 ms per word
    arrivals = []
    started = time.perf_counter()
    # A transport that hands the body over as it is sent (httpx's own one buffers it).
    transport = StreamingASGITransport(application)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client, client.stream("POST", "/v1/chat/completions", headers={"Authorization": f"Bearer {alice.secret}"},
                             json={"model": "omicron-4-mini", "stream": True,
                                   "messages": [{"role": "user", "content": "count to 10"}]}) as response:
        async for _chunk in response.aiter_raw():
            arrivals.append(time.perf_counter() - started)
    assert len(arrivals) >= 10
    assert arrivals[0] < 0.2 and arrivals[-1] - arrivals[0] >= 0.4
