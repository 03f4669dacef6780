"""``POST /v1/responses``: pass-through, translation onto a messages upstream, events, errors."""

from __future__ import annotations

import orjson
import pytest

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/v1/responses"


def auth(account) -> dict[str, str]:
    return {"Authorization": f"Bearer {account.secret}"}


def events(text: str) -> list[tuple[str, dict]]:
    out = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.split("\n"))
        out.append((lines["event"], orjson.loads(lines["data"])))
    return out


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
async def test_buffered_response_object(client, alice, model):
    response = await client.post(URL, headers=auth(alice), json={
        "model": model, "input": [{"role": "user", "content": [{"type": "input_text", "text": "nice weather"}]}],
        "instructions": "answer briefly", "metadata": {"run": "1"}})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["object"] == "response" and body["status"] == "completed" and body["model"] == model
    message = [item for item in body["output"] if item["type"] == "message"][0]
    assert message["content"][0] == {"type": "output_text", "text": "You said: nice weather", "annotations": [],
                                     "logprobs": []}
    assert body["instructions"] == "answer briefly" and body["metadata"] == {"run": "1"}
    usage = body["usage"]
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"] and usage["output_tokens"] == 4


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
async def test_stream_events_in_order_without_done(client, alice, model):
    response = await client.post(URL, headers=auth(alice), json={"model": model, "input": "hello", "stream": True})
    parsed = events(response.text)
    names = [n for n, _ in parsed]
    assert names[:4] == ["response.created", "response.in_progress", "response.output_item.added",
                         "response.content_part.added"]
    assert names[-4:] == ["response.output_text.done", "response.content_part.done", "response.output_item.done",
                          "response.completed"]
    assert [d["sequence_number"] for _, d in parsed] == list(range(len(parsed)))
    assert all(d["type"] == n for n, d in parsed)
    assert "[DONE]" not in response.text
    final = parsed[-1][1]["response"]
    assert final["output"][0]["content"][0]["text"] == "You said: hello" and final["usage"]["output_tokens"] == 3


async def test_truncation_reports_incomplete(client, alice):
    response = await client.post(URL, headers=auth(alice), json={
        "model": "epsilon-4.5", "input": "count to 30", "max_output_tokens": 16})
    body = response.json()
    assert body["status"] == "incomplete" and body["incomplete_details"] == {"reason": "max_output_tokens"}


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"input": "x"}, "model"),
        ({"model": "omicron-4-mini"}, "input"),
        ({"model": "omicron-4-mini", "input": 42}, "input"),
        ({"model": "omicron-4-mini", "input": "x", "max_output_tokens": 0}, "max_output_tokens"),
        ({"model": "omicron-4-mini", "input": "x", "max_output_tokens": 15}, "max_output_tokens"),
        ({"model": "omicron-4-mini", "input": ["x"]}, "input[0]"),
        ({"model": "kappa-image-1", "input": "x"}, "model"),
        ({"model": "epsilon-4.5", "input": "x", "previous_response_id": "resp_1"}, "previous_response_id"),
        ({"model": "epsilon-4.5", "input": "x", "tools": [{"type": "web_search"}]}, "tools[0].type"),
    ],
)
async def test_bad_input_is_400_naming_the_field(client, alice, body, param):
    response = await client.post(URL, headers=auth(alice), json=body)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == param


async def test_mid_stream_failure_ends_with_failed_response(client, alice):
    response = await client.post(URL, headers=auth(alice), json={
        "model": "omicron-4-mini", "input": "a b c [fail-midstream] d", "stream": True})
    parsed = events(response.text)
    assert [n for n, _ in parsed][-2:] == ["error", "response.failed"]
    assert [d["sequence_number"] for _, d in parsed] == list(range(len(parsed)))
    failed = parsed[-1][1]["response"]
    assert failed["status"] == "failed" and failed["error"]["code"] == "server_error"


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
async def test_upstream_error_before_any_event_keeps_its_status(client, alice, model):
    response = await client.post(URL, headers=auth(alice), json={
        "model": model, "input": "[status:429] hi", "stream": True})
    assert response.status_code == 429
    assert response.json()["error"]["type"] == "requests"


async def test_model_list_keeps_every_kind(client, alice):
    response = await client.get("/v1/models", headers=auth(alice))
    ids = {m["id"] for m in response.json()["data"]}
    assert {"omicron-4-mini", "epsilon-4.5", "delta-3.1-flash-image", "alpha-2.5"} <= ids


async def test_mid_stream_failure_numbers_on_from_every_event_sent_before_it(client, alice, catalog):
    """An upstream may send many events in one read, which go out to the client together: the
    failure's events carry the numbers after the last event sent, not after the pieces sent."""
    from tests.providers.fake_text_vendor import Answer, mounted_vendor

    def event(name: str, number: int, **fields) -> bytes:
        data = orjson.dumps({"type": name, "sequence_number": number, **fields})
        return b"event: " + name.encode() + b"\ndata: " + data + b"\n\n"

    started = {"id": "resp_fake", "object": "response", "status": "in_progress", "model": "vendor-mini", "output": []}
    first_read = (event("response.created", 0, response=started) + event("response.in_progress", 1, response=started)
                  + b"".join(event("response.output_text.delta", n, item_id="msg_1", output_index=0,
                                   content_index=0, delta=f"w{n} ") for n in range(2, 6)))
    failure = event("error", 6, code="server_error", message="the vendor broke down", param=None)
    async for fake in mounted_vendor("openai", "http://responses-reads.test/v1", {"omicron-4-mini": "vendor-mini"}):
        fake.answer = lambda request: Answer(content_type="text/event-stream", chunks=[first_read, failure])
        response = await client.post(URL, headers=auth(alice), json={
            "model": "omicron-4-mini", "input": "hello", "stream": True})
        assert fake.requests, "the call went to the scripted vendor"
    parsed = events(response.text)
    assert [n for n, _ in parsed] == ["response.created", "response.in_progress", *["response.output_text.delta"] * 4,
                                      "error", "response.failed"]
    assert [d["sequence_number"] for _, d in parsed] == list(range(8))
    assert parsed[-1][1]["response"]["id"] == "resp_fake"
