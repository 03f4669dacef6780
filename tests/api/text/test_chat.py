"""``POST /v1/chat/completions`` through the gateway: pass-through to an OpenAI-protocol
upstream, translation to a messages upstream, streams, usage records and bad input."""

from __future__ import annotations

import orjson
import pytest

from studio.gateway import recording

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/v1/chat/completions"


def auth(account) -> dict[str, str]:
    return {"Authorization": f"Bearer {account.secret}"}


def sse_data(text: str) -> list[bytes]:
    return [line[6:].encode() for line in text.split("\n") if line.startswith("data: ")]


async def test_answer_is_derived_from_the_prompt(client, alice):
    response = await client.post(URL, headers=auth(alice), json={
        "model": "omicron-4-mini", "messages": [{"role": "user", "content": "tell me about otters"}]})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["object"] == "chat.completion" and body["model"] == "omicron-4-mini"
    choice = body["choices"][0]
    assert choice["message"]["content"] == "You said: tell me about otters"
    assert choice["finish_reason"] == "stop"
    usage = body["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["completion_tokens"] == len(choice["message"]["content"].split())


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
async def test_max_tokens_truncates_with_finish_reason_length(client, alice, model):
    response = await client.post(URL, headers=auth(alice), json={
        "model": model, "max_tokens": 5, "messages": [{"role": "user", "content": "count to 40"}]})
    assert response.status_code == 200, response.text
    choice = response.json()["choices"][0]
    assert choice["finish_reason"] == "length"
    assert choice["message"]["content"] == "1 2 3 4 5"
    assert response.json()["usage"]["completion_tokens"] == 5


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
async def test_stop_sequence_cuts_the_answer(client, alice, model):
    response = await client.post(URL, headers=auth(alice), json={
        "model": model, "stop": ["7"], "messages": [{"role": "user", "content": "count to 10"}]})
    choice = response.json()["choices"][0]
    assert choice["message"]["content"] == "1 2 3 4 5 6 " and choice["finish_reason"] == "stop"


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
async def test_stream_frames_done_and_usage_chunk(client, alice, model):
    response = await client.post(URL, headers=auth(alice), json={
        "model": model, "stream": True, "stream_options": {"include_usage": True},
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello there friend"}]})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert "event:" not in response.text
    frames = sse_data(response.text)
    assert frames[-1] == b"[DONE]"
    chunks = [orjson.loads(f) for f in frames[:-1]]
    assert all(c["object"] == "chat.completion.chunk" and c["model"] == model for c in chunks)
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "You said: hello there friend"
    assert len([c for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")]) >= 4
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "stop"
    usage_chunk = chunks[-1]
    assert usage_chunk["choices"] == [] and usage_chunk["usage"]["completion_tokens"] == 5
    assert all(c.get("usage") is None for c in chunks[:-1])


async def test_stream_without_include_usage_has_no_usage_but_is_recorded(client, alice):
    from studio.models import UsageRecord

    response = await client.post(URL, headers=auth(alice), json={
        "model": "omicron-4-mini", "stream": True, "messages": [{"role": "user", "content": "one two three"}]})
    chunks = [orjson.loads(f) for f in sse_data(response.text)[:-1]]
    assert all(c["choices"] for c in chunks)
    assert not any("usage" in c for c in chunks)
    await recording.drain()
    record = await UsageRecord.objects.aget(api_key=alice.key)
    assert record.route == "chat" and record.model_id == "omicron-4-mini"
    assert record.output_tokens == 5 and record.input_tokens > 0
    assert record.total_tokens == record.input_tokens + record.output_tokens
    assert record.upstream_id is not None and record.latency_ms is not None and record.first_byte_ms is not None


async def test_buffered_usage_recorded_for_translated_model(client, alice):
    from studio.models import UsageRecord

    response = await client.post(URL, headers=auth(alice), json={
        "model": "epsilon-4.5", "messages": [{"role": "user", "content": "a b c"}]})
    usage = response.json()["usage"]
    await recording.drain()
    record = await UsageRecord.objects.aget(api_key=alice.key)
    assert (record.input_tokens, record.output_tokens) == (usage["prompt_tokens"], usage["completion_tokens"])
    assert record.status_code == 200


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
async def test_tool_call_and_tool_result_round_trip(client, alice, model):
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
                                               "parameters": {"type": "object", "properties": {
                                                   "city": {"type": "string"}}, "required": ["city"]}}}]
    messages = [{"role": "user", "content": "Use get_weather for Paris please"}]
    first = await client.post(URL, headers=auth(alice), json={"model": model, "messages": messages, "tools": tools})
    choice = first.json()["choices"][0]
    assert choice["finish_reason"] == "tool_calls", first.text
    call = choice["message"]["tool_calls"][0]
    assert call["function"]["name"] == "get_weather"
    assert orjson.loads(call["function"]["arguments"]) == {"city": "Paris"}
    messages += [choice["message"], {"role": "tool", "tool_call_id": call["id"], "content": "sunny, 21C"}]
    second = await client.post(URL, headers=auth(alice), json={"model": model, "messages": messages, "tools": tools})
    assert second.status_code == 200, second.text
    assert second.json()["choices"][0]["message"]["content"] == "The tool get_weather returned: sunny, 21C"


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
async def test_streamed_tool_call_arguments_concatenate(client, alice, model):
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {
        "type": "object", "properties": {"term": {"type": "string"}}}}}]
    response = await client.post(URL, headers=auth(alice), json={
        "model": model, "stream": True, "tools": tools,
        "messages": [{"role": "user", "content": "please lookup about Kyoto"}]})
    chunks = [orjson.loads(f) for f in sse_data(response.text)[:-1]]
    calls = [tc for c in chunks for tc in c["choices"][0]["delta"].get("tool_calls") or ()]
    assert calls[0]["id"] and calls[0]["function"]["name"] == "lookup"
    assert orjson.loads("".join(tc["function"].get("arguments") or "" for tc in calls)) == {"term": "Kyoto"}
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


async def test_image_parts_reach_a_translated_upstream(client, alice):
    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
    response = await client.post(URL, headers=auth(alice), json={"model": "epsilon-4.5", "messages": [{
        "role": "user", "content": [{"type": "text", "text": "what is this"},
                                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{pixel}"}}]}]})
    assert response.json()["choices"][0]["message"]["content"] == "You said: what is this I see 1 image."


async def test_reasoning_effort_comes_back_as_reasoning_content(client, alice):
    response = await client.post(URL, headers=auth(alice), json={
        "model": "epsilon-4.5", "reasoning_effort": "low", "messages": [{"role": "user", "content": "hi"}]})
    message = response.json()["choices"][0]["message"]
    assert message["reasoning_content"].startswith("The user wrote 1 words")
    assert message["content"] == "You said: hi"


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
async def test_failure_mid_stream_sends_error_chunk_and_ends(client, alice, model):
    response = await client.post(URL, headers=auth(alice), json={
        "model": model, "stream": True, "messages": [{"role": "user", "content": "go on [fail-midstream] now ok"}]})
    assert response.status_code == 200
    frames = sse_data(response.text)
    assert b"[DONE]" not in frames
    error = orjson.loads(frames[-1])["error"]
    assert error["message"] and error["type"]
    assert any(b'"content":"You"' in f for f in frames)


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"messages": [{"role": "user", "content": "x"}]}, "model"),
        ({"model": "omicron-4-mini"}, "messages"),
        ({"model": "omicron-4-mini", "messages": []}, "messages"),
        ({"model": "omicron-4-mini", "messages": "hello"}, "messages"),
        ({"model": "omicron-4-mini", "messages": [{"content": "x"}]}, "messages[0].role"),
        ({"model": "omicron-4-mini", "messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, "max_tokens"),
        ({"model": "omicron-4-mini", "messages": [{"role": "user", "content": "x"}], "temperature": "hot"},
         "temperature"),
        ({"model": "omicron-4-mini", "messages": [{"role": "user", "content": "x"}], "stream": "yes"}, "stream"),
        ({"model": "delta-3.1-flash-image", "messages": [{"role": "user", "content": "x"}]}, "model"),
        ({"model": 7, "messages": [{"role": "user", "content": "x"}]}, "model"),
    ],
)
async def test_bad_input_is_400_naming_the_field(client, alice, body, param):
    response = await client.post(URL, headers=auth(alice), json=body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["param"] == param and error["type"] == "invalid_request_error" and param.split("[")[0] in error["message"]


async def test_invalid_json_and_missing_key(client, alice):
    response = await client.post(URL, headers={**auth(alice), "content-type": "application/json"}, content=b"{oops")
    assert response.status_code == 400 and response.json()["error"]["param"] == "body"
    response = await client.post(URL, json={"model": "omicron-4-mini", "messages": []})
    assert response.status_code == 401 and response.json()["error"]["code"] == "invalid_api_key"


async def test_upstream_http_error_maps_to_status_and_family_body(client, alice):
    response = await client.post(URL, headers=auth(alice), json={
        "model": "epsilon-4.5", "messages": [{"role": "user", "content": "please [status:429]"}]})
    assert response.status_code == 429
    assert response.json()["error"]["type"] == "requests"
    assert response.json()["error"]["code"] == "rate_limit_exceeded"
