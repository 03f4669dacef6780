"""The fake vendor answers in the vendors' real shapes, and fast enough to measure others against."""

from __future__ import annotations

import asyncio
import base64

import httpx
import orjson
import pytest

from bench.fake_upstream import FakeVendor, serve
from bench.payloads import Payloads, split_tokens


@pytest.fixture(scope="module")
def payloads() -> Payloads:
    return Payloads(small=True)


@pytest.fixture
async def upstream(payloads: Payloads):
    server = await serve("127.0.0.1", 0, FakeVendor(payloads, stream_chunks=5))
    port = server.sockets[0].getsockname()[1]
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
        yield client
    server.close()
    await server.wait_closed()


def sse_data(text: str) -> list[str]:
    return [line[len("data: "):] for line in text.replace("\r\n", "\n").split("\n") if line.startswith("data: ")]


async def test_chat_buffered_echoes_the_model_and_needs_a_bearer_key(upstream: httpx.AsyncClient) -> None:
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
    ok = await upstream.post("/v1/chat/completions", json=body, headers={"Authorization": "Bearer k"})
    assert ok.status_code == 200
    answer = ok.json()
    assert answer["object"] == "chat.completion" and answer["model"] == "gpt-4o-mini"
    assert answer["choices"][0]["message"]["content"] and answer["usage"]["total_tokens"] == 32

    denied = await upstream.post("/v1/chat/completions", json=body)
    assert denied.status_code == 401 and denied.json()["error"]["code"] == "invalid_api_key"
    bad = await upstream.post("/v1/chat/completions", content=b"{", headers={"Authorization": "Bearer k"})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "messages"


async def test_chat_stream_sends_chunks_a_usage_chunk_and_done(upstream: httpx.AsyncClient) -> None:
    body = {"model": "m", "messages": [], "stream": True, "stream_options": {"include_usage": True}}
    # The base URL may carry /v1 or not: the fake matches the path's tail.
    resp = await upstream.post("/chat/completions", json=body, headers={"Authorization": "Bearer k"})
    assert resp.status_code == 200 and resp.headers["content-type"] == "text/event-stream"
    data = sse_data(resp.text)
    assert data[-1] == "[DONE]"
    chunks = [orjson.loads(d) for d in data[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text.startswith("Hello!") and len([c for c in chunks if c["choices"]]) == 5 + 2
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 18


async def test_gemini_returns_a_real_png_and_streams_the_4k_frame_whole(
        upstream: httpx.AsyncClient, payloads: Payloads) -> None:
    body = {"contents": [{"parts": [{"text": "a fox"}]}]}
    key = {"x-goog-api-key": "k"}
    resp = await upstream.post("/v1beta/models/gemini-x:generateContent", json=body, headers=key)
    assert resp.status_code == 200
    answer = resp.json()
    parts = answer["candidates"][0]["content"]["parts"]
    image = base64.b64decode(parts[-1]["inlineData"]["data"])
    assert image[:8] == b"\x89PNG\r\n\x1a\n" and image == payloads.image_1k_png
    assert parts[-1]["thoughtSignature"] and answer["modelVersion"] == "gemini-x"
    assert answer["candidates"][0]["finishReason"] == "STOP"

    four_k = {**body, "generationConfig": {"imageConfig": {"imageSize": "4K"}}}
    stream = await upstream.post("/v1beta/models/gemini-x:streamGenerateContent?alt=sse", json=four_k, headers=key)
    assert stream.status_code == 200
    events = [orjson.loads(d) for d in sse_data(stream.text)]
    assert len(events) == 2 and "\r\n\r\n" in stream.text  # Gemini frames with CRLF
    last_parts = events[-1]["candidates"][0]["content"]["parts"]
    assert base64.b64decode(last_parts[0]["inlineData"]["data"]) == payloads.image_4k_png
    assert events[-1]["usageMetadata"]["totalTokenCount"] > 0

    denied = await upstream.post("/v1beta/models/gemini-x:generateContent", json=body)
    assert denied.status_code == 403 and denied.json()["error"]["status"] == "PERMISSION_DENIED"
    missing = await upstream.post("/v1beta/models/gemini-x:generateContent", json={}, headers=key)
    assert missing.status_code == 400 and missing.json()["error"]["status"] == "INVALID_ARGUMENT"


def named_events(text: str) -> list[tuple[str, dict]]:
    events = []
    for block in text.split("\n\n"):
        if block:
            name, data = block.split("\n")
            assert name.startswith("event: ") and data.startswith("data: ")
            events.append((name[len("event: "):], orjson.loads(data[len("data: "):])))
    return events


async def test_messages_stream_and_body_are_what_the_anthropic_sdk_reads(upstream: httpx.AsyncClient) -> None:
    from anthropic import AsyncAnthropic

    ask = {"model": "claude-x", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}
    async with AsyncAnthropic(api_key="k", base_url=str(upstream.base_url), max_retries=0) as client:
        message = await client.messages.create(**ask)
        async with client.messages.stream(**ask) as stream:
            streamed = await stream.get_final_message()
    assert message.model == "claude-x" and message.stop_reason == "end_turn"
    assert message.content[0].text.startswith("Hello!") and message.usage.output_tokens == 18
    assert streamed.content[0].text == message.content[0].text and streamed.usage.output_tokens == 18

    raw = await upstream.post("/v1/messages", json={**ask, "stream": True},
                              headers={"x-api-key": "k", "anthropic-version": "2023-06-01"})
    events = named_events(raw.text)
    assert all(name == data["type"] for name, data in events)
    assert [name for name, _ in events].count("content_block_delta") == 5
    assert events[0][0] == "message_start" and events[-1][0] == "message_stop"

    denied = await upstream.post("/v1/messages", json=ask, headers={"anthropic-version": "2023-06-01"})
    assert denied.status_code == 401 and denied.json()["error"]["type"] == "authentication_error"
    unversioned = await upstream.post("/v1/messages", json=ask, headers={"x-api-key": "k"})
    assert unversioned.status_code == 400 and "anthropic-version" in unversioned.json()["error"]["message"]
    no_max = await upstream.post("/v1/messages", json={**ask, "max_tokens": None},
                                 headers={"x-api-key": "k", "anthropic-version": "2023-06-01"})
    assert no_max.status_code == 400 and "max_tokens" in no_max.json()["error"]["message"]


async def test_responses_stream_and_body_are_what_the_openai_sdk_reads(upstream: httpx.AsyncClient) -> None:
    from openai import AsyncOpenAI

    deltas = []
    async with AsyncOpenAI(api_key="k", base_url=str(upstream.base_url).rstrip("/") + "/v1", max_retries=0) as client:
        response = await client.responses.create(model="gpt-x", input="hi")
        async with client.responses.stream(model="gpt-x", input="hi") as stream:
            async for event in stream:
                if event.type == "response.output_text.delta":
                    deltas.append(event.delta)
            final = await stream.get_final_response()
    assert response.model == "gpt-x" and response.status == "completed"
    assert response.output_text.startswith("Hello!") and response.usage.total_tokens == 32
    assert len(deltas) == 5 and "".join(deltas) == response.output_text == final.output_text
    assert response.id.startswith("resp_") and len({response.id, final.id}) == 2  # an id of its own each

    raw = await upstream.post("/v1/responses", json={"model": "gpt-x", "input": "hi", "stream": True},
                              headers={"Authorization": "Bearer k"})
    events = named_events(raw.text)
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    assert events[0][0] == "response.created" and events[-1][0] == "response.completed"

    denied = await upstream.post("/v1/responses", json={"model": "gpt-x", "input": "hi"})
    assert denied.status_code == 401 and denied.json()["error"]["code"] == "invalid_api_key"
    missing = await upstream.post("/v1/responses", json={"model": "gpt-x"}, headers={"Authorization": "Bearer k"})
    assert missing.status_code == 400 and missing.json()["error"]["param"] == "input"


async def test_keep_alive_serves_many_requests_on_few_connections(upstream: httpx.AsyncClient) -> None:
    body = {"model": "m", "messages": []}
    results = await asyncio.gather(*(
        upstream.post("/v1/chat/completions", json=body, headers={"Authorization": "Bearer k"}) for _ in range(50)))
    assert [r.status_code for r in results] == [200] * 50
    assert (await upstream.get("/nowhere")).status_code == 404


def test_real_sizes_are_what_the_scenarios_promise() -> None:
    from bench.payloads import IMAGE_1K_FRAME_BYTES, SIZE_1K, png_for_frame

    png = png_for_frame(IMAGE_1K_FRAME_BYTES, SIZE_1K)
    frame = len(base64.b64encode(png))
    assert 0.8 * IMAGE_1K_FRAME_BYTES < frame < 1.2 * IMAGE_1K_FRAME_BYTES


def test_split_tokens_keeps_the_text() -> None:
    pieces = split_tokens("abcdefghij", 4)
    assert len(pieces) == 4 and "".join(pieces) == "abcdefghij"
