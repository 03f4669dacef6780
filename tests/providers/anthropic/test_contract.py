"""Captured Anthropic bodies (the vendor's documented examples, in ``fixtures/``) replayed through
the adapter: relayed as they are to a messages client, translated for chat and responses clients."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from tests.providers.fake_text_vendor import FakeVendor, add_upstream, fixture_answer

pytestmark = pytest.mark.django_db(transaction=True)

FIXTURES = Path(__file__).parent / "fixtures"
BASE = "http://captured-anthropic.test"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


@pytest.fixture
async def vendor(catalog):
    from studio.gateway import routing
    from studio.models import Upstream

    fake = FakeVendor(BASE)
    fake.mount()
    await add_upstream("anthropic", BASE, {"epsilon-4.5": "claude-sonnet-4-5"})
    await Upstream.objects.filter(name="Sandbox").aupdate(enabled=False)
    routing.reset_health()
    yield fake
    fake.unmount()


def replay(vendor: FakeVendor, name: str, status: int = 200) -> None:
    vendor.answer = lambda request: fixture_answer(FIXTURES / name, status)


def bearer(account) -> dict[str, str]:
    return {"Authorization": f"Bearer {account.secret}"}


def data_lines(text: str) -> list[dict]:
    return [orjson.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]


async def test_tool_use_message_relayed_and_translated(client, alice, vendor):
    replay(vendor, "message_tool_use.json")
    captured = json.loads((FIXTURES / "message_tool_use.json").read_text())
    relayed = await client.post("/v1/messages", headers={"x-api-key": alice.secret, "anthropic-version": "2023-06-01"},
                                json={"model": "epsilon-4.5", "max_tokens": 100,
                                      "messages": [{"role": "user", "content": "weather?"}]})
    assert relayed.json() == {**captured, "model": "epsilon-4.5"}
    chat = (await client.post("/v1/chat/completions", headers=bearer(alice), json={
        "model": "epsilon-4.5", "tools": TOOLS, "messages": [{"role": "user", "content": "weather?"}]})).json()
    message = chat["choices"][0]["message"]
    assert message["content"] == "I'll check the current weather in San Francisco for you."
    assert message["tool_calls"][0]["id"] == "toolu_01A09q90qw90lq917835lq9"
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"location": "San Francisco, CA",
                                                                            "unit": "celsius"}
    assert chat["choices"][0]["finish_reason"] == "tool_calls"
    assert chat["usage"] == {"prompt_tokens": 384, "completion_tokens": 92, "total_tokens": 476,
                             "prompt_tokens_details": {"cached_tokens": 0}}


async def test_thinking_stream_for_a_chat_client(client, alice, vendor):
    replay(vendor, "stream_thinking.sse")
    response = await client.post("/v1/chat/completions", headers=bearer(alice), json={
        "model": "epsilon-4.5", "stream": True, "stream_options": {"include_usage": True}, "reasoning_effort": "low",
        "messages": [{"role": "user", "content": "gcd of 1071 and 462?"}]})
    chunks = data_lines(response.text)
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    reasoning = "".join(d.get("reasoning_content") or "" for d in deltas)
    assert reasoning.startswith("I need to find the GCD") and reasoning.endswith("So GCD is 21.")
    assert "".join(d.get("content") or "" for d in deltas) == "The greatest common divisor of 1071 and 462 is **21**."
    assert chunks[-1]["usage"]["prompt_tokens"] == 36 and chunks[-1]["usage"]["completion_tokens"] == 125
    assert response.text.endswith("data: [DONE]\n\n")
    assert vendor.requests[0]["body"]["thinking"] == {"type": "enabled", "budget_tokens": 1024}


async def test_thinking_stream_relayed_with_the_vendors_signature(client, alice, vendor):
    replay(vendor, "stream_thinking.sse")
    response = await client.post("/v1/messages", headers={"x-api-key": alice.secret, "anthropic-version": "2023-06-01"},
                                 json={"model": "epsilon-4.5", "max_tokens": 2000, "stream": True,
                                       "thinking": {"type": "enabled", "budget_tokens": 1024},
                                       "messages": [{"role": "user", "content": "gcd?"}]})
    frames = data_lines(response.text)
    signatures = [f["delta"]["signature"] for f in frames if f.get("delta", {}).get("type") == "signature_delta"]
    assert signatures == ["EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds7XwkbDcp7hJG6q6aqtFCJ2lMi1+o0thdAl2uZqiOTO7"
                          "zxSUmVJvUfN+3TOo+T0wxhxwn0WbLA=="]
    assert frames[0]["message"]["model"] == "epsilon-4.5" and frames[-1] == {"type": "message_stop"}


async def test_tool_use_stream_for_a_responses_client(client, alice, vendor):
    replay(vendor, "stream_tool_use.sse")
    response = await client.post("/v1/responses", headers=bearer(alice), json={
        "model": "epsilon-4.5", "stream": True, "input": "weather in SF?",
        "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]})
    events = [(b.split("\n")[0][7:], orjson.loads(b.split("\n")[1][6:])) for b in response.text.strip().split("\n\n")]
    final = events[-1][1]["response"]
    assert events[-1][0] == "response.completed"
    call = [item for item in final["output"] if item["type"] == "function_call"][0]
    assert call["name"] == "get_weather" and call["call_id"] == "toolu_01T1x1fJ34qAmk2tNTrN7Up6"
    assert json.loads(call["arguments"]) == {"location": "San Francisco, CA", "unit": "fahrenheit"}
    text = [item for item in final["output"] if item["type"] == "message"][0]["content"][0]["text"]
    assert text == "Okay, let's check the weather for San Francisco, CA:"
    assert final["usage"]["input_tokens"] == 472 and final["usage"]["output_tokens"] == 89


async def test_count_tokens_and_overloaded_error(client, alice, vendor):
    replay(vendor, "count_tokens.json")
    headers = {"x-api-key": alice.secret, "anthropic-version": "2023-06-01"}
    counted = await client.post("/v1/messages/count_tokens", headers=headers, json={
        "model": "epsilon-4.5", "messages": [{"role": "user", "content": "hello"}]})
    assert counted.json() == {"input_tokens": 2095}
    assert vendor.requests[-1]["path"] == "/v1/messages/count_tokens"
    replay(vendor, "error_overloaded.json", status=529)
    failed = await client.post("/v1/messages", headers=headers, json={
        "model": "epsilon-4.5", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]})
    assert failed.status_code == 503 and failed.json()["error"] == {"type": "overloaded_error",
                                                                   "message": failed.json()["error"]["message"]}
    assert "Overloaded" in failed.json()["error"]["message"] and failed.json()["request_id"].startswith("req_")
