"""The sandbox called directly, as a vendor is: every field of a valid request, in turn, given a
value of each other JSON type (or left out), gets the vendor's own 4xx or a 2xx, never a 500 (the
gateway checks most fields first; the sandbox answers the rest as the vendors do)."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from studio.providers.asgi_transport import StreamingASGITransport
from studio.sandbox.app import application
from tests.wrong_values import PNG, chat_body, variants

HEADERS = {"Authorization": "Bearer k", "x-api-key": "k", "x-goog-api-key": "k", "anthropic-version": "2023-06-01",
           "Content-Type": "application/json"}

CASES: list[tuple[str, dict[str, Any]]] = [
    ("/v1/chat/completions", {**chat_body("gpt-4o-mini"), "stream_options": {"include_usage": True}}),
    ("/v1/messages", {
        "model": "claude-sonnet-4-5", "max_tokens": 20, "system": "be brief", "stop_sequences": ["END"], "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "done"}]}],
        "tools": [{"name": "f", "input_schema": {"type": "object"}}], "tool_choice": {"type": "tool", "name": "f"}}),
    ("/v1/responses", {
        "model": "gpt-4o-mini", "instructions": "be brief", "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "done"}],
        "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}],
        "text": {"format": {"type": "json_schema", "name": "n", "schema": {"type": "object"}}}}),
    ("/v1/embeddings", {"model": "text-embedding-3-small", "input": ["a", "b"], "dimensions": 8}),
    ("/v1beta/models/gemini-embedding-001:batchEmbedContents", {"requests": [{
        "model": "models/gemini-embedding-001", "content": {"parts": [{"text": "a"}]}, "outputDimensionality": 128}]}),
    ("/v1beta/models/gemini-3-pro-image-preview:countTokens", {
        "contents": [{"role": "user", "parts": [{"text": "a"}, {"inlineData": {"mimeType": "image/png", "data": PNG}}]}]}),
    ("/v1beta/models/gemini-3-pro-image-preview:generateContent", {
        "contents": [{"role": "user", "parts": [{"text": "a fox"}]}],
        "generationConfig": {"responseModalities": ["IMAGE"], "imageConfig": {"aspectRatio": "1:1", "imageSize": "1K"},
                             "thinkingConfig": {"includeThoughts": False}}}),
]


@pytest.fixture
async def sandbox():
    async with httpx.AsyncClient(transport=StreamingASGITransport(application), base_url="http://sandbox",
                                 timeout=60) as c:
        yield c


@pytest.mark.parametrize(("path", "body"), CASES, ids=[path for path, _ in CASES])
async def test_a_field_of_the_wrong_type_gets_the_vendors_4xx_never_a_500(sandbox, path, body):
    assert (await sandbox.post(path, content=orjson.dumps(body), headers=HEADERS)).status_code == 200
    failures = []
    for change, variant in variants(body, depth=99):
        for streamed in (False, True) if path in ("/v1/chat/completions", "/v1/messages", "/v1/responses") else (False,):
            sent = {**variant, "stream": True} if streamed else variant
            response = await sandbox.post(path, content=orjson.dumps(sent), headers=HEADERS)
            if response.status_code >= 500:
                failures.append(f"{change}{' (streamed)' if streamed else ''}: {response.text[:200]}")
            elif response.status_code >= 400 and not isinstance(response.json().get("error"), dict):
                failures.append(f"{change}: {response.status_code} without the vendor's error object")
    assert not failures, "\n".join(failures)
