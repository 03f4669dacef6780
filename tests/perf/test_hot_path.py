"""The /v1 hot path: from receiving a request to handing the upstream's answer over, no database
query and no thread hop — through the whole ASGI stack, not just the engine."""

from __future__ import annotations

import asyncio
import base64
import gc

import pytest

from studio.gateway import snapshot
from tests.api.native.native_fakes import fake_gemini, image_frame, json_reply, sse_reply  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def held_records(monkeypatch):
    """Keep records in memory: writing them is the recorder's job, off the request path."""
    held = []
    monkeypatch.setattr("studio.gateway.recording.submit", lambda record, **_: held.append(record))
    return held


@pytest.fixture
async def hops(monkeypatch):
    """Every hand-off to a worker thread (``sync_to_async``, ``to_thread``) goes through here."""
    seen: list[object] = []
    loop = asyncio.get_running_loop()
    original = loop.run_in_executor

    def counting(executor, func, *args):
        seen.append(func)
        return original(executor, func, *args)

    monkeypatch.setattr(loop, "run_in_executor", counting)
    return seen


CHAT = {"model": "omicron-4-mini", "messages": [{"role": "user", "content": "hello there"}]}


@pytest.mark.parametrize("stream", [False, True])
async def test_chat_request_has_no_query_and_no_thread_hop(client, alice, count_queries, held_records, hops,
                                                           stream):
    await snapshot.get()  # a warm process
    count_queries["n"], hops[:] = 0, []
    response = await client.post("/v1/chat/completions", json={**CHAT, "stream": stream},
                                 headers={"Authorization": f"Bearer {alice.secret}"})
    assert response.status_code == 200
    assert count_queries["n"] == 0, count_queries["sql"]
    assert hops == []
    assert len(held_records) == 1


async def test_models_list_has_no_query_and_no_thread_hop(client, alice, count_queries, hops):
    await snapshot.get()
    count_queries["n"], hops[:] = 0, []
    response = await client.get("/v1/models", headers={"Authorization": f"Bearer {alice.secret}"})
    assert response.status_code == 200 and count_queries["n"] == 0 and hops == []


@pytest.mark.parametrize("stream", [False, True])
async def test_native_image_request_has_no_query_and_no_thread_hop(client, alice, fake_gemini,  # noqa: F811
                                                                   count_queries, held_records, hops, stream,
                                                                   collected_generators):
    data = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 2048).decode()
    fake = fake_gemini["fake-gemini"]
    fake.queue(sse_reply(image_frame(data)) if stream else json_reply(image_frame(data)))
    await snapshot.get()
    count_queries["n"], hops[:] = 0, []
    method = "streamGenerateContent" if stream else "generateContent"
    response = await client.post(f"/v1/models/delta-3.1-flash-image:{method}",
                                 json={"contents": [{"parts": [{"text": "a kite"}]}]},
                                 headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 200
    assert count_queries["n"] == 0, count_queries["sql"]
    assert hops == []
    assert len(held_records) == 1
    gc.collect()
    assert collected_generators == []


@pytest.fixture
async def collected_generators(monkeypatch):
    """Async generators left unfinished and closed by the garbage collector: each costs a task
    and a wake-up of the event loop through its pipe (a system call each way)."""
    seen: list[str] = []
    loop = asyncio.get_running_loop()
    original = loop._asyncgen_finalizer_hook

    def finalized(agen):
        seen.append(agen.ag_code.co_qualname)
        return original(agen)

    monkeypatch.setattr(loop, "_asyncgen_finalizer_hook", finalized)
    gc.collect()
    seen.clear()
    return seen


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses"])
async def test_a_stream_read_to_its_end_marker_leaves_nothing_for_the_collector(client, alice, held_records,
                                                                                 collected_generators, path):
    await snapshot.get()
    body = {**CHAT, "stream": True} if path.endswith("completions") else {
        "model": CHAT["model"], "input": "hello there", "stream": True}
    response = await client.post(path, json=body, headers={"Authorization": f"Bearer {alice.secret}"})
    assert response.status_code == 200 and response.text.rstrip().endswith(("[DONE]", "}"))
    gc.collect()
    await asyncio.sleep(0)
    assert collected_generators == []
