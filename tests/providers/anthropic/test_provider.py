"""The Anthropic adapter against a fake vendor: headers, pass-through, error mapping, streams."""

from __future__ import annotations

import orjson
import pytest

from tests.providers.fake_text_vendor import FakeVendor, add_upstream, json_answer, sse_answer

pytestmark = pytest.mark.django_db(transaction=True)

BASE = "http://fake-anthropic.test"
MESSAGE = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-vendor-20250929",
           "content": [{"type": "text", "text": "hello"}], "stop_reason": "end_turn", "stop_sequence": None,
           "usage": {"input_tokens": 8, "output_tokens": 1, "cache_read_input_tokens": 2}, "container": None}
HEADERS = {"epsilon-version": "2023-06-01"}


@pytest.fixture
async def vendor(catalog):
    from studio.gateway import routing
    from studio.models import Upstream

    fake = FakeVendor(BASE)
    fake.mount()
    await add_upstream("anthropic", BASE, {"epsilon-4.5": "claude-vendor", "omicron-4-mini": "claude-vendor"})
    await Upstream.objects.filter(name="Sandbox").aupdate(enabled=False)
    routing.reset_health()
    yield fake
    fake.unmount()


def frame(name: str, data: dict) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps({"type": name, **data}) + b"\n\n"


async def test_pass_through_headers_path_and_body(client, alice, vendor):
    vendor.answer = lambda request: json_answer(MESSAGE)
    sent = {"model": "epsilon-4.5", "max_tokens": 10, "messages": [{"role": "user", "content": "x"}],
            "thinking": {"type": "enabled", "budget_tokens": 1024}, "brand_new_option": True}
    response = await client.post("/v1/messages", json=sent, headers={"x-api-key": alice.secret, **HEADERS})
    request = vendor.requests[0]
    assert request["path"] == "/v1/messages"
    assert request["headers"]["x-api-key"] == "vendor-secret-anthropic"
    assert request["headers"]["anthropic-version"] == "2023-06-01"
    assert "authorization" not in request["headers"]
    assert request["body"] == {**sent, "model": "claude-vendor"}
    assert response.json() == {**MESSAGE, "model": "epsilon-4.5"}


@pytest.mark.parametrize(
    ("status", "kind", "client_status", "openai_type", "messages_type"),
    [
        (400, "invalid_request_error", 400, "invalid_request_error", "invalid_request_error"),
        (429, "rate_limit_error", 429, "requests", "rate_limit_error"),
        (529, "overloaded_error", 503, "server_error", "overloaded_error"),
        (500, "api_error", 502, "server_error", "api_error"),
        (504, "timeout_error", 504, "server_error", "timeout_error"),
    ],
)
async def test_vendor_errors_rendered_in_each_family(client, alice, vendor, status, kind, client_status,
                                                     openai_type, messages_type):
    vendor.answer = lambda request: json_answer({"type": "error", "error": {"type": kind, "message": "vendor says"}},
                                                status)
    messages = await client.post("/v1/messages", headers={"x-api-key": alice.secret, **HEADERS}, json={
        "model": "epsilon-4.5", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]})
    assert messages.status_code == client_status
    assert messages.json()["error"]["type"] == messages_type and "vendor says" in messages.json()["error"]["message"]
    chat = await client.post("/v1/chat/completions", headers={"Authorization": f"Bearer {alice.secret}"}, json={
        "model": "epsilon-4.5", "messages": [{"role": "user", "content": "x"}]})
    assert chat.status_code == client_status and chat.json()["error"]["type"] == openai_type


async def test_stream_relayed_with_model_swapped_and_usage_recorded(client, alice, vendor):
    from studio.gateway import recording
    from studio.models import UsageRecord

    frames = [
        frame("message_start", {"message": {**MESSAGE, "content": [], "stop_reason": None,
                                            "usage": {"input_tokens": 8, "output_tokens": 1}}}),
        b": keepalive\n\n", frame("ping", {}),
        frame("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        frame("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "hel"}}),
        frame("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "lo"}}),
        frame("content_block_stop", {"index": 0}),
        frame("message_delta", {"delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                "usage": {"output_tokens": 2}}),
        frame("message_stop", {}),
    ]
    vendor.answer = lambda request: sse_answer(frames)
    response = await client.post("/v1/messages", headers={"x-api-key": alice.secret, **HEADERS}, json={
        "model": "epsilon-4.5", "max_tokens": 5, "stream": True, "messages": [{"role": "user", "content": "x"}]})
    assert response.text.count("event: ") == 8
    assert '"model":"epsilon-4.5"' in response.text and "claude-vendor" not in response.text
    await recording.drain()
    record = await UsageRecord.objects.aget(api_key=alice.key)
    assert (record.input_tokens, record.output_tokens) == (8, 2)


async def test_chat_stream_translated_from_vendor_events(client, alice, vendor):
    frames = [
        frame("message_start", {"message": {**MESSAGE, "content": [], "usage": {"input_tokens": 8,
                                                                                 "output_tokens": 1}}}),
        frame("content_block_start", {"index": 0, "content_block": {"type": "tool_use", "id": "toolu_1",
                                                                    "name": "f", "input": {}}}),
        frame("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"a":'}}),
        frame("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta", "partial_json": "1}"}}),
        frame("content_block_stop", {"index": 0}),
        frame("message_delta", {"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 6}}),
        frame("message_stop", {}),
    ]
    vendor.answer = lambda request: sse_answer(frames)
    response = await client.post("/v1/chat/completions", headers={"Authorization": f"Bearer {alice.secret}"}, json={
        "model": "epsilon-4.5", "stream": True, "stream_options": {"include_usage": True},
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        "messages": [{"role": "user", "content": "x"}]})
    body = vendor.requests[0]["body"]
    assert body["tools"] == [{"name": "f", "description": "", "input_schema": {"type": "object"}}]
    assert body["stream"] is True and body["max_tokens"] == 4096
    chunks = [orjson.loads(line[6:]) for line in response.text.split("\n") if line.startswith("data: {")]
    calls = [c for ch in chunks if ch["choices"] for c in ch["choices"][0]["delta"].get("tool_calls") or ()]
    assert calls[0]["id"] == "toolu_1" and "".join(c["function"]["arguments"] for c in calls) == '{"a":1}'
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    usage = chunks[-1]["usage"]
    # The call's cost at the seeded price (3 and 15 USD per million tokens in and out).
    assert usage.pop("cost_usd") == pytest.approx((8 * 3 + 6 * 15) / 1_000_000)
    assert usage == {"prompt_tokens": 8, "completion_tokens": 6, "total_tokens": 14,
                     "prompt_tokens_details": {"cached_tokens": 0}}
    assert response.text.endswith("data: [DONE]\n\n")


async def test_error_event_mid_stream(client, alice, vendor):
    frames = [frame("message_start", {"message": {**MESSAGE, "content": []}}),
              frame("error", {"error": {"type": "overloaded_error", "message": "Overloaded"}})]
    vendor.answer = lambda request: sse_answer(frames)
    response = await client.post("/v1/messages", headers={"x-api-key": alice.secret, **HEADERS}, json={
        "model": "epsilon-4.5", "max_tokens": 5, "stream": True, "messages": [{"role": "user", "content": "x"}]})
    assert response.status_code == 200
    last = response.text.strip().split("\n\n")[-1]
    assert last.startswith("event: error\ndata: ")
    assert orjson.loads(last.split("data: ", 1)[1])["error"]["type"] == "overloaded_error"


async def test_error_before_first_event_keeps_http_status(client, alice, vendor):
    vendor.answer = lambda request: json_answer(
        {"type": "error", "error": {"type": "rate_limit_error", "message": "wait"}}, 429)
    response = await client.post("/v1/messages", headers={"x-api-key": alice.secret, **HEADERS}, json={
        "model": "epsilon-4.5", "max_tokens": 5, "stream": True, "messages": [{"role": "user", "content": "x"}]})
    assert response.status_code == 429 and response.json()["error"]["type"] == "rate_limit_error"


async def test_stream_with_no_event_is_an_upstream_error(client, alice, vendor):
    vendor.answer = lambda request: sse_answer([b": keepalive\n\n"])
    response = await client.post("/v1/messages", headers={"x-api-key": alice.secret, **HEADERS}, json={
        "model": "epsilon-4.5", "max_tokens": 5, "stream": True, "messages": [{"role": "user", "content": "x"}]})
    assert response.status_code == 502 and response.json()["error"]["type"] == "api_error"
