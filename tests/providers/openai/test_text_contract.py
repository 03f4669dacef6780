"""Captured OpenAI text bodies (the vendor's documented examples, in ``fixtures/``) replayed through
the adapter: translated for a messages client, relayed (and stored) for a responses client."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from tests.providers.fake_text_vendor import FakeVendor, add_upstream, fixture_answer

pytestmark = pytest.mark.django_db(transaction=True)

FIXTURES = Path(__file__).parent / "fixtures"
BASE = "http://captured-openai.test"
MESSAGES_HEADERS = {"anthropic-version": "2023-06-01"}


@pytest.fixture
async def vendor(catalog):
    from studio.gateway import routing
    from studio.models import Upstream

    fake = FakeVendor(BASE)
    fake.mount()
    await add_upstream("openai", BASE, {"omicron-4-mini": "gpt-4o-mini"})
    await Upstream.objects.filter(name="Sandbox").aupdate(enabled=False)
    routing.reset_health()
    yield fake
    fake.unmount()


def replay(vendor: FakeVendor, name: str, status: int = 200) -> None:
    vendor.answer = lambda request: fixture_answer(FIXTURES / name, status)


async def test_tool_calls_answer_for_a_messages_client(client, alice, vendor):
    replay(vendor, "chat_completion_tool_calls.json")
    message = (await client.post("/v1/messages", headers={"x-api-key": alice.secret, **MESSAGES_HEADERS}, json={
        "model": "omicron-4-mini", "max_tokens": 50, "messages": [{"role": "user", "content": "Boston weather?"}],
        "tools": [{"name": "get_current_weather", "input_schema": {"type": "object"}}]})).json()
    assert message["content"] == [{"type": "tool_use", "id": "call_abc123", "name": "get_current_weather",
                                   "input": {"location": "Boston, MA"}}]
    assert message["stop_reason"] == "tool_use"
    assert message["usage"]["input_tokens"] == 82 and message["usage"]["output_tokens"] == 17
    assert vendor.requests[0]["path"] == "/v1/chat/completions"


async def test_chat_stream_for_a_messages_client(client, alice, vendor):
    replay(vendor, "chat_stream.sse")
    response = await client.post("/v1/messages", headers={"x-api-key": alice.secret, **MESSAGES_HEADERS}, json={
        "model": "omicron-4-mini", "max_tokens": 50, "stream": True,
        "messages": [{"role": "user", "content": "Paris weather?"}]})
    frames = [orjson.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]
    assert frames[0]["type"] == "message_start" and frames[0]["message"]["usage"]["input_tokens"] > 0
    text = "".join(f["delta"]["text"] for f in frames if f.get("delta", {}).get("type") == "text_delta")
    arguments = "".join(f["delta"]["partial_json"] for f in frames
                        if f.get("delta", {}).get("type") == "input_json_delta")
    assert text == "Hello!" and json.loads(arguments) == {"location": "Paris, France"}
    final = [f for f in frames if f["type"] == "message_delta"][0]
    assert final["delta"]["stop_reason"] == "tool_use"
    assert final["usage"]["input_tokens"] == 74 and final["usage"]["output_tokens"] == 18


async def test_responses_stream_relayed_and_stored_under_the_vendors_id(client, alice, vendor):
    replay(vendor, "responses_stream.sse")
    headers = {"Authorization": f"Bearer {alice.secret}"}
    response = await client.post("/v1/responses", headers=headers, json={
        "model": "omicron-4-mini", "input": "hi", "instructions": "You are a helpful assistant.", "stream": True})
    blocks = response.text.strip().split("\n\n")
    assert len(blocks) == 9 and all(b.split("\n")[1][6:].find('"model":"omicron-4-mini"') >= 0
                                    for b in (blocks[0], blocks[-1]))
    vendor_id = "resp_67c9fdcecf488190bdd9a0409de3a1ec07b8b0ad4e5eb654"
    stored = (await client.get(f"/v1/responses/{vendor_id}", headers=headers)).json()
    assert stored["status"] == "completed" and stored["model"] == "omicron-4-mini"
    assert stored["output"][0]["content"][0]["text"] == "Hi there! How can I assist you today?"
    items = (await client.get(f"/v1/responses/{vendor_id}/input_items", headers=headers)).json()
    assert [i["content"][0]["text"] for i in items["data"]] == ["hi"]


async def test_a_vendor_missing_its_model_is_not_the_clients_model_not_found(client, alice, vendor):
    replay(vendor, "error_model_not_found.json", status=404)
    response = await client.post("/v1/chat/completions", headers={"Authorization": f"Bearer {alice.secret}"}, json={
        "model": "omicron-4-mini", "messages": [{"role": "user", "content": "x"}]})
    error = response.json()["error"]
    assert response.status_code == 502 and error["type"] == "server_error" and error["code"] is None
