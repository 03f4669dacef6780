"""The text hot path: no database query and no thread hop between the request and the answer;
the first frame reaches the client as soon as the upstream sends it."""

from __future__ import annotations

import asyncio

import httpx
import orjson
import pytest
from asgiref.sync import SyncToAsync

from studio.gateway import snapshot
from studio.gateway.auth import authenticate
from studio.gateway.text import engine as text_engine
from studio.gateway.text.record import TextRecord
from studio.gateway.text.stored import ResponseRecord
from studio.providers.asgi_transport import StreamingASGITransport
from tests.providers.fake_text_vendor import FakeVendor, add_upstream, sse_answer

pytestmark = pytest.mark.django_db(transaction=True)

VENDOR = "http://held-stream.test/v1"

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
    monkeypatch.setattr("studio.gateway.text.record.recording.submit", lambda record, **_: held.append(record))
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
    usage = [r for r in held_records if isinstance(r, TextRecord)]
    assert len(usage) == 1 and usage[0].route == fmt and usage[0].output_tokens == 3
    stored = [r for r in held_records if isinstance(r, ResponseRecord)]  # responses are kept for GET, off the path
    assert len(stored) == (1 if fmt == "responses" else 0)


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


async def test_first_frame_relayed_before_the_upstream_finishes(alice, catalog):
    """The vendor holds the rest of its stream until the client has seen the first frame: a
    gateway that buffered the stream would never deliver it (the wait below would time out)."""
    from studio.asgi import application

    client_saw_first = asyncio.Event()

    def chunk(delta: dict, finish: str | None = None) -> bytes:
        return b"data: " + orjson.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1,
                                         "model": "vendor-mini", "choices": [{"index": 0, "delta": delta,
                                                                             "finish_reason": finish}]}) + b"\n\n"

    async def held_stream():
        yield chunk({"role": "assistant", "content": "one"})
        await client_saw_first.wait()
        yield chunk({"content": " two"}, "stop")
        yield b"data: [DONE]\n\n"

    vendor = FakeVendor(VENDOR, answer=lambda request: sse_answer(held_stream()))
    vendor.mount()
    await add_upstream("openai", VENDOR, {"omicron-4-mini": "vendor-mini"}, priority=1000)
    frames = []
    # A transport that hands the body over as it is sent (httpx's own one buffers it).
    transport = StreamingASGITransport(application)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client, \
                client.stream("POST", "/v1/chat/completions", headers={"Authorization": f"Bearer {alice.secret}"},
                              json={"model": "omicron-4-mini", "stream": True,
                                    "messages": [{"role": "user", "content": "count"}]}) as response:
            async def read() -> None:
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        frames.append(line[6:])
                        client_saw_first.set()
            await asyncio.wait_for(read(), timeout=30)
    finally:
        vendor.unmount()
    assert orjson.loads(frames[0])["choices"][0]["delta"]["content"] == "one"
    assert orjson.loads(frames[1])["choices"][0]["delta"]["content"] == " two"
    assert frames[-1] == "[DONE]"
