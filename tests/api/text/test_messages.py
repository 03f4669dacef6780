"""``POST /v1/messages``: headers, framing of the stream, errors in the messages body."""

from __future__ import annotations

import orjson
import pytest

from studio.gateway import recording

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/v1/messages"


def headers(account, **extra) -> dict[str, str]:
    return {"x-api-key": account.secret, "epsilon-version": "2023-06-01", **extra}


def events(text: str) -> list[tuple[str, dict]]:
    out = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.split("\n"))
        out.append((lines["event"], orjson.loads(lines["data"])))
    return out


BODY = {"model": "epsilon-4.5", "max_tokens": 64, "messages": [{"role": "user", "content": "hello world"}]}


@pytest.mark.parametrize("auth", ["x-api-key", "bearer"])
async def test_key_in_either_header(client, alice, auth):
    sent = ({"x-api-key": alice.secret} if auth == "x-api-key" else {"Authorization": f"Bearer {alice.secret}"})
    response = await client.post(URL, json=BODY, headers={**sent, "epsilon-version": "2023-06-01"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["type"] == "message" and body["model"] == "epsilon-4.5"
    assert body["content"] == [{"type": "text", "text": "You said: hello world"}]
    assert body["stop_reason"] == "end_turn" and body["usage"]["output_tokens"] == 4


async def test_version_header_required_and_alias_accepted(client, alice):
    response = await client.post(URL, json=BODY, headers={"x-api-key": alice.secret})
    assert response.status_code == 400
    assert response.json() == {"type": "error", "error": {"type": "invalid_request_error",
                                                          "message": "epsilon-version: header is required"},
                               "request_id": response.headers["request-id"]}
    response = await client.post(URL, json=BODY, headers={"x-api-key": alice.secret, "anthropic-version": "2023-06-01"})
    assert response.status_code == 200


async def test_bad_key_is_401_in_messages_body(client, alice):
    response = await client.post(URL, json=BODY, headers={"x-api-key": "nope", "epsilon-version": "2023-06-01"})
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "authentication_error"


@pytest.mark.parametrize("model", ["epsilon-4.5", "omicron-4-mini"])
async def test_stream_framing_from_start_to_stop(client, alice, model):
    response = await client.post(URL, json={**BODY, "model": model, "stream": True}, headers=headers(alice))
    assert response.status_code == 200
    parsed = events(response.text)
    names = [name for name, _ in parsed]
    assert names[0] == "message_start" and names[-1] == "message_stop"
    assert "ping" in names and "[DONE]" not in response.text
    assert all(data["type"] == name for name, data in parsed)
    assert parsed[0][1]["message"]["model"] == model
    text = "".join(d["delta"]["text"] for n, d in parsed if n == "content_block_delta")
    assert text == "You said: hello world"
    delta = next(d for n, d in parsed if n == "message_delta")
    assert delta["delta"]["stop_reason"] == "end_turn" and delta["usage"]["output_tokens"] == 4
    await recording.drain()
    from studio.models import UsageRecord

    record = await UsageRecord.objects.aget(api_key=alice.key)
    assert record.route == "messages" and record.output_tokens == 4 and record.input_tokens > 0


@pytest.mark.parametrize("model", ["epsilon-4.5", "omicron-4-mini"])
async def test_stop_sequences_and_max_tokens(client, alice, model):
    body = {**BODY, "model": model, "messages": [{"role": "user", "content": "count to 20"}]}
    stopped = (await client.post(URL, json={**body, "stop_sequences": [" 4"]}, headers=headers(alice))).json()
    assert stopped["content"][0]["text"] == "1 2 3"
    assert stopped["stop_reason"] == ("stop_sequence" if model == "epsilon-4.5" else "end_turn")
    cut = (await client.post(URL, json={**body, "max_tokens": 2}, headers=headers(alice))).json()
    assert cut["content"][0]["text"] == "1 2" and cut["stop_reason"] == "max_tokens"


@pytest.mark.parametrize("model", ["epsilon-4.5", "omicron-4-mini"])
async def test_mid_stream_failure_is_an_error_event(client, alice, model):
    body = {**BODY, "model": model, "stream": True,
            "messages": [{"role": "user", "content": "one two [fail-midstream] three"}]}
    response = await client.post(URL, json=body, headers=headers(alice))
    assert response.status_code == 200
    parsed = events(response.text)
    assert parsed[-1][0] == "error" and parsed[-1][1]["type"] == "error"
    assert parsed[-1][1]["error"]["type"] in ("overloaded_error", "api_error")
    assert "message_stop" not in [n for n, _ in parsed]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}, "model"),
        ({"model": "epsilon-4.5", "messages": [{"role": "user", "content": "x"}]}, "max_tokens"),
        ({"model": "epsilon-4.5", "max_tokens": 0, "messages": [{"role": "user", "content": "x"}]}, "max_tokens"),
        ({"model": "epsilon-4.5", "max_tokens": 5}, "messages"),
        ({"model": "epsilon-4.5", "max_tokens": 5, "messages": [{"role": "system", "content": "x"}]},
         "messages[0].role"),
        ({"model": "epsilon-4.5", "max_tokens": 5, "messages": [{"role": "user", "content": 5}]},
         "messages[0].content"),
        ({"model": "epsilon-4.5", "max_tokens": "5", "messages": [{"role": "user", "content": "x"}]}, "max_tokens"),
        ({"model": "alpha-2.5", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}, "model"),
    ],
)
async def test_bad_input_is_400_in_messages_body(client, alice, body, field):
    response = await client.post(URL, json=body, headers=headers(alice))
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    assert field in error["error"]["message"]


async def test_upstream_error_keeps_status_in_messages_body(client, alice):
    body = {**BODY, "messages": [{"role": "user", "content": "[status:529] please"}]}
    response = await client.post(URL, json=body, headers=headers(alice))
    assert response.status_code == 503
    assert response.json()["error"]["type"] == "overloaded_error"
