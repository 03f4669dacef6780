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
