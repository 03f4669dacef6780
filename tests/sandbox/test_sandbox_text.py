"""The sandbox's text vendors spoken to directly: protocol checks, the deterministic model,
truncation and stop sequences the vendors' way, tool calls, token counts, failures."""

from __future__ import annotations

import httpx
import orjson
import pytest

from studio.providers.asgi_transport import StreamingASGITransport
from studio.providers.sse import iter_sse
from studio.sandbox.app import application
from studio.sandbox.textgen import Prompt, Tool, Turn, generate


@pytest.fixture
async def sandbox():
    async with httpx.AsyncClient(transport=StreamingASGITransport(application), base_url="http://sandbox") as c:
        yield c


OPENAI = {"Authorization": "Bearer k"}
ANTHROPIC = {"x-api-key": "k", "anthropic-version": "2023-06-01"}


def test_answers_follow_the_prompt_and_tokens_add_up():
    first = generate(Prompt(turns=[Turn("user", "red apples")]))
    second = generate(Prompt(turns=[Turn("user", "green pears and more")]))
    assert first.text == "You said: red apples" and second.text == "You said: green pears and more"
    assert first.output_tokens == len(first.pieces) == 4
    assert second.input_tokens > first.input_tokens


def test_tool_call_only_when_named_and_offered():
    tools = [Tool("get_weather", {"type": "object", "properties": {"city": {"type": "string"},
                                                                 "days": {"type": "integer"}}})]
    called = generate(Prompt(turns=[Turn("user", "get_weather in New York for 3 days")], tools=tools))
    assert called.finish == "tool_call" and orjson.loads(called.tool_call.arguments) == {"city": "New York", "days": 3}
    assert generate(Prompt(turns=[Turn("user", "hello")], tools=tools)).tool_call is None
    assert generate(Prompt(turns=[Turn("user", "get_weather in Rome")])).tool_call is None


async def test_chat_buffered_and_counts(sandbox):
    response = await sandbox.post("/v1/chat/completions", headers=OPENAI, json={
        "model": "gpt-4o-mini", "messages": [{"role": "user", "content": "count to 8"}], "max_tokens": 3})
    body = response.json()
    assert body["choices"][0]["message"]["content"] == "1 2 3" and body["choices"][0]["finish_reason"] == "length"
    assert body["usage"]["completion_tokens"] == 3
    assert body["usage"]["total_tokens"] == body["usage"]["prompt_tokens"] + 3


async def test_chat_stream_framing(sandbox):
    async with sandbox.stream("POST", "/v1/chat/completions", headers=OPENAI, json={
            "model": "gpt-4o-mini", "stream": True, "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": "a b"}]}) as response:
        events = [e async for e in iter_sse(response.aiter_raw())]
    assert all(e.event is None for e in events) and events[-1].data == b"[DONE]"
    chunks = [orjson.loads(e.data) for e in events[:-1]]
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 4
    assert all(c["usage"] is None for c in chunks[:-1])


@pytest.mark.parametrize(("headers", "body", "status", "param"), [
    ({}, {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "x"}]}, 401, None),
    (OPENAI, {"model": "gpt-4o-mini", "messages": []}, 400, "messages"),
    (OPENAI, {"model": "nonexistent", "messages": [{"role": "user", "content": "x"}]}, 404, None),
    (OPENAI, {"model": "gpt-4o-mini", "max_tokens": 0, "messages": [{"role": "user", "content": "x"}]}, 400,
     "max_tokens"),
])
async def test_chat_errors_in_vendor_shape(sandbox, headers, body, status, param):
    response = await sandbox.post("/v1/chat/completions", headers=headers, json=body)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["message"] and error["param"] == param and "type" in error


async def test_messages_requires_vendor_headers_and_max_tokens(sandbox):
    body = {"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": "x"}]}
    assert (await sandbox.post("/v1/messages", json=body, headers={"anthropic-version": "1"})).status_code == 401
    missing = await sandbox.post("/v1/messages", json=body, headers={"x-api-key": "k"})
    assert missing.status_code == 400 and "anthropic-version" in missing.json()["error"]["message"]
    no_budget = await sandbox.post("/v1/messages", json={**body, "max_tokens": None}, headers=ANTHROPIC)
    assert no_budget.status_code == 400 and no_budget.json()["error"]["type"] == "invalid_request_error"
    # Newer official SDKs send the key as a bearer token (anthropic 2.x), which the API takes.
    bearer = await sandbox.post("/v1/messages", json=body,
                                headers={"authorization": "Bearer k", "anthropic-version": "2026-10-21"})
    assert bearer.status_code == 200 and bearer.json()["type"] == "message"


async def test_messages_stop_sequence_and_thinking(sandbox):
    response = await sandbox.post("/v1/messages", headers=ANTHROPIC, json={
        "model": "claude-sonnet-4-5", "max_tokens": 100, "stop_sequences": ["4"],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [{"role": "user", "content": "count to 6"}]})
    body = response.json()
    assert [b["type"] for b in body["content"]] == ["thinking", "text"]
    assert body["content"][1]["text"] == "1 2 3 " and body["stop_reason"] == "stop_sequence"
    assert body["stop_sequence"] == "4"



async def test_omitted_thinking_keeps_its_signature_without_its_text(sandbox):
    ask = {"model": "claude-sonnet-4-5", "max_tokens": 2000, "messages": [{"role": "user", "content": "why is the sky blue?"}],
           "thinking": {"type": "enabled", "budget_tokens": 1024, "display": "omitted"}}
    shown = (await sandbox.post("/v1/messages", headers=ANTHROPIC, json={
        **ask, "thinking": {"type": "enabled", "budget_tokens": 1024}})).json()["content"][0]
    omitted = (await sandbox.post("/v1/messages", headers=ANTHROPIC, json=ask)).json()["content"][0]
    assert shown["thinking"] and omitted["type"] == "thinking" and omitted["thinking"] == ""
    assert omitted["signature"] and shown["thinking"] not in omitted["signature"]
    streamed = await sandbox.post("/v1/messages", headers=ANTHROPIC, json={**ask, "stream": True})
    deltas = [orjson.loads(line[6:])["delta"]["type"] for line in streamed.text.splitlines()
              if line.startswith("data: ") and '"content_block_delta"' in line]
    assert "thinking_delta" not in deltas and "signature_delta" in deltas


async def test_a_thinking_tool_loop_sends_back_the_thinking_that_led_to_the_calls(sandbox):
    """The vendor's rule: while thinking, the last assistant turn, when it called tools, starts with
    its thinking block; a turn that ended in text, or thinking off, asks nothing."""
    think = {"type": "enabled", "budget_tokens": 1024}
    tools = [{"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
    ask = {"model": "claude-sonnet-4-5", "max_tokens": 2000, "thinking": think, "tools": tools,
           "messages": [{"role": "user", "content": "get_weather for Oslo"}]}
    first = (await sandbox.post("/v1/messages", headers=ANTHROPIC, json=ask)).json()
    assert [b["type"] for b in first["content"]] == ["thinking", "text", "tool_use"]
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first["content"][2]["id"],
                                           "content": "snow"}]}
    kept = {**ask, "messages": [*ask["messages"], {"role": "assistant", "content": first["content"]}, result]}
    assert (await sandbox.post("/v1/messages", headers=ANTHROPIC, json=kept)).status_code == 200
    dropped = {**ask, "messages": [*ask["messages"], {"role": "assistant", "content": first["content"][1:]}, result]}
    refused = await sandbox.post("/v1/messages", headers=ANTHROPIC, json=dropped)
    assert refused.status_code == 400 and refused.json()["error"]["message"].startswith(
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` "
        "is enabled, a final `assistant` message must start with a thinking block")
    assert (await sandbox.post("/v1/messages", headers=ANTHROPIC, json={
        **dropped, "thinking": {"type": "disabled"}})).status_code == 200
    finished = {**dropped, "messages": [*dropped["messages"], {"role": "assistant", "content": "Snow."},
                                        {"role": "user", "content": "thanks"}]}
    assert (await sandbox.post("/v1/messages", headers=ANTHROPIC, json=finished)).status_code == 200

async def test_a_thinking_block_sent_back_is_checked_against_its_signature(sandbox):
    """As the vendor: a block comes back with the signature it was given (its text omitted or
    not); a changed text, another model's signature or none is the vendor's 400, naming the block."""
    ask = {"model": "claude-sonnet-4-5", "max_tokens": 2000, "thinking": {"type": "enabled", "budget_tokens": 1024},
           "messages": [{"role": "user", "content": "why is the sky blue?"}]}
    block = (await sandbox.post("/v1/messages", headers=ANTHROPIC, json=ask)).json()["content"][0]

    async def back(thought):
        return await sandbox.post("/v1/messages", headers=ANTHROPIC, json={**ask, "messages": [
            *ask["messages"], {"role": "assistant", "content": [thought, {"type": "text", "text": "Light."}]},
            {"role": "user", "content": "and at dusk?"}]})

    assert (await back(block)).status_code == 200
    assert (await back({**block, "thinking": ""})).status_code == 200
    for wrong in ({**block, "thinking": "something else"}, {**block, "signature": "c2d3MQ" + block["signature"][6:]},
                  {**block, "signature": "gAAAAABfake"}):
        refused = await back(wrong)
        assert refused.status_code == 400
        assert refused.json()["error"] == {"type": "invalid_request_error",
                                           "message": "messages.1.content.0: Invalid `signature` in `thinking` block"}
    unsigned = await back({"type": "thinking", "thinking": "x"})
    assert unsigned.json()["error"]["message"] == "messages.1.content.0.thinking.signature: Field required"


async def test_messages_stream_usage_is_cumulative_and_failure_is_error_event(sandbox):
    async with sandbox.stream("POST", "/v1/messages", headers=ANTHROPIC, json={
            "model": "claude-sonnet-4-5", "max_tokens": 50, "stream": True,
            "messages": [{"role": "user", "content": "hello there"}]}) as response:
        events = [e async for e in iter_sse(response.aiter_raw())]
    names = [e.event for e in events]
    assert names[0] == "message_start" and names[1] == "ping" and names[-1] == "message_stop"
    delta = orjson.loads(events[-2].data)
    assert delta["usage"]["output_tokens"] == 4
    async with sandbox.stream("POST", "/v1/messages", headers=ANTHROPIC, json={
            "model": "claude-sonnet-4-5", "max_tokens": 50, "stream": True,
            "messages": [{"role": "user", "content": "one two [fail-midstream] three"}]}) as response:
        events = [e async for e in iter_sse(response.aiter_raw())]
    assert events[-1].event == "error" and orjson.loads(events[-1].data)["error"]["type"] == "overloaded_error"


async def test_status_marker_answers_with_that_status(sandbox):
    response = await sandbox.post("/v1/messages", headers=ANTHROPIC, json={
        "model": "claude-sonnet-4-5", "max_tokens": 5, "messages": [{"role": "user", "content": "[status:429]"}]})
    assert response.status_code == 429 and response.json()["error"]["type"] == "rate_limit_error"


async def test_responses_stream_sequence_and_truncation(sandbox):
    async with sandbox.stream("POST", "/v1/responses", headers=OPENAI, json={
            "model": "gpt-4o-mini", "input": "count to 30", "max_output_tokens": 16, "stream": True}) as response:
        events = [e async for e in iter_sse(response.aiter_raw())]
    payloads = [orjson.loads(e.data) for e in events]
    assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))
    assert all(p["type"] == e.event for p, e in zip(payloads, events, strict=True))
    assert events[-1].event == "response.incomplete"
    assert payloads[-1]["response"]["incomplete_details"] == {"reason": "max_output_tokens"}


async def test_responses_reasoning_is_summarized_only_when_asked(sandbox):
    """As OpenAI's reasoning models answer: the reasoning item's summary is empty unless the
    request asks for one (then streamed in its own events), the response repeats what was asked,
    and an unknown summary setting is the vendor's 400."""
    body = {"model": "o4-mini", "input": "why is the sky blue", "reasoning": {"effort": "low"}}
    plain = (await sandbox.post("/v1/responses", headers=OPENAI, json=body)).json()
    assert plain["reasoning"] == {"effort": "low", "summary": None}
    assert plain["output"][0]["type"] == "reasoning" and plain["output"][0]["summary"] == []
    assert plain["usage"]["output_tokens_details"]["reasoning_tokens"] > 0

    asked = {**body, "reasoning": {"effort": "low", "summary": "auto"}}
    summarized = (await sandbox.post("/v1/responses", headers=OPENAI, json=asked)).json()
    assert summarized["reasoning"] == {"effort": "low", "summary": "auto"}
    summary = summarized["output"][0]["summary"]
    assert [part["type"] for part in summary] == ["summary_text"] and summary[0]["text"]

    async with sandbox.stream("POST", "/v1/responses", headers=OPENAI, json={**asked, "stream": True}) as r:
        events = [orjson.loads(e.data) async for e in iter_sse(r.aiter_raw())]
    kinds = [e["type"] for e in events]
    first = kinds.index("response.output_item.added")
    assert kinds[first:first + 6] == [
        "response.output_item.added", "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done", "response.output_item.done"]
    assert events[first]["item"]["summary"] == []
    assert "".join(e["delta"] for e in events if e["type"] == "response.reasoning_summary_text.delta") == \
        summary[0]["text"]
    assert events[first + 5]["item"]["summary"] == summary

    wrong = await sandbox.post("/v1/responses", headers=OPENAI,
                               json={**body, "reasoning": {"effort": "low", "summary": "verbose"}})
    assert wrong.status_code == 400 and wrong.json()["error"]["param"] == "reasoning.summary"



async def test_stateless_reasoning_comes_encrypted_and_goes_back_verified(sandbox):
    """Codex's way with OpenAI (``store`` off, the reasoning's encrypted content asked for): the
    reasoning item carries a token the vendor opens when it comes back; a changed token is the
    vendor's 400, and an item without one, which nothing stored, its 404."""
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
    question = {"role": "user", "content": "get_weather for Oslo"}
    asked = {"model": "o4-mini", "reasoning": {"effort": "low"}, "store": False, "tools": tools,
             "include": ["reasoning.encrypted_content"]}
    first = (await sandbox.post("/v1/responses", headers=OPENAI, json={**asked, "input": [question]})).json()
    reasoning, call = first["output"][0], first["output"][-1]
    assert reasoning["type"] == "reasoning" and reasoning["encrypted_content"].startswith("gAAAAA")
    assert "Oslo" not in reasoning["encrypted_content"]
    answer = {"type": "function_call_output", "call_id": call["call_id"], "output": "snow"}

    def following(item):
        return sandbox.post("/v1/responses", headers=OPENAI, json={**asked, "input": [question, item, call, answer]})

    assert (await following(reasoning)).status_code == 200
    token = reasoning["encrypted_content"]
    changed = await following({**reasoning, "encrypted_content": token[:40] + ("A" if token[40] != "A" else "B")
                               + token[41:]})
    assert changed.status_code == 400 and changed.json()["error"]["code"] == "invalid_encrypted_content"
    assert changed.json()["error"]["message"] == (f"The encrypted content {token[:4]}...{token[-4:]} could not be "
                                                  "verified. Reason: Encrypted content could not be decrypted or parsed.")
    bare = {key: value for key, value in reasoning.items() if key != "encrypted_content"}
    missing = await following(bare)
    assert missing.status_code == 404 and missing.json()["error"]["message"].startswith(
        f"Item with id '{reasoning['id']}' not found. Items are not persisted when `store` is set to false.")
    stored = await sandbox.post("/v1/responses", headers=OPENAI, json={
        **asked, "store": True, "input": [question, bare, call, answer]})
    assert stored.status_code == 200
    async with sandbox.stream("POST", "/v1/responses", headers=OPENAI,
                              json={**asked, "input": [question], "stream": True}) as r:
        events = [orjson.loads(e.data) async for e in iter_sse(r.aiter_raw())]
    done = next(e["item"] for e in events if e["type"] == "response.output_item.done")
    assert done["encrypted_content"] == events[-1]["response"]["output"][0]["encrypted_content"]


async def test_only_reasoning_models_reason_and_chat_never_shows_it(sandbox):
    """OpenAI's reasoning models think by default (an effort of ``none`` turns it off); chat
    completions count the reasoning without showing it, buffered or streamed; a model that does not
    reason refuses an effort with the vendor's 400, and accepts a summary-only ``reasoning``."""
    chat = {"model": "o4-mini", "messages": [{"role": "user", "content": "why is the sky blue"}]}
    for effort in (None, "low"):
        answer = (await sandbox.post("/v1/chat/completions", headers=OPENAI,
                                     json={**chat, "reasoning_effort": effort} if effort else chat)).json()
        assert set(answer["choices"][0]["message"]) == {"role", "content", "refusal", "annotations"}
        assert answer["usage"]["completion_tokens_details"]["reasoning_tokens"] > 0
    off = (await sandbox.post("/v1/chat/completions", headers=OPENAI, json={**chat, "reasoning_effort": "none"})).json()
    assert off["usage"]["completion_tokens_details"]["reasoning_tokens"] == 0
    async with sandbox.stream("POST", "/v1/chat/completions", headers=OPENAI, json={**chat, "stream": True}) as r:
        chunks = [orjson.loads(e.data) async for e in iter_sse(r.aiter_raw()) if e.data != b"[DONE]"]
    assert {key for c in chunks for choice in c["choices"] for key in choice["delta"]} == {"role", "content", "refusal"}
    plain = (await sandbox.post("/v1/responses", headers=OPENAI, json={"model": "o4-mini", "input": "hi"})).json()
    assert plain["output"][0]["type"] == "reasoning"

    for path, body, param in (
            ("/v1/chat/completions", {**chat, "model": "gpt-4o-mini", "reasoning_effort": "low"}, "reasoning_effort"),
            ("/v1/responses", {"model": "gpt-4.1", "input": "hi", "reasoning": {"effort": "low"}}, "reasoning.effort")):
        refused = await sandbox.post(path, headers=OPENAI, json=body)
        assert refused.status_code == 400
        assert refused.json()["error"] == {
            "message": f"Unsupported parameter: '{param}' is not supported with this model.",
            "type": "invalid_request_error", "param": param, "code": "unsupported_parameter"}
    capped = await sandbox.post("/v1/chat/completions", headers=OPENAI, json={**chat, "max_tokens": 50})
    assert capped.status_code == 400 and capped.json()["error"]["param"] == "max_tokens"
    assert capped.json()["error"]["message"].endswith("Use 'max_completion_tokens' instead.")
    bounded = await sandbox.post("/v1/chat/completions", headers=OPENAI, json={**chat, "max_completion_tokens": 50})
    assert bounded.status_code == 200
    summary_only = await sandbox.post("/v1/responses", headers=OPENAI, json={
        "model": "gpt-4.1", "input": "hi", "reasoning": {"summary": "auto"}})
    assert summary_only.status_code == 200 and [i["type"] for i in summary_only.json()["output"]] == ["message"]


WEATHER = Tool("get_weather", {"type": "object", "properties": {"location": {"type": "string"}}},
               "Get the current weather for a location")
CALCULATOR = Tool("calculator", {"type": "object", "properties": {"expression": {"type": "string"}}},
                  "Evaluate an arithmetic expression")
LOOKUP = Tool("search_docs", {"type": "object", "properties": {"query": {"type": "string"}}},
              "Find articles in the knowledge base")


@pytest.mark.parametrize(
    ("said", "tool", "arguments"),
    [
        ("Is it raining in Paris right now?", "get_weather", {"location": "Paris"}),
        ("What's the temperature like in New York?", "get_weather", {"location": "New York"}),
        ("What is 17 times 23?", "calculator", {"expression": "17 * 23"}),
        ("please compute (4 + 5) / 3", "calculator", {"expression": "(4 + 5) / 3"}),
        ("Find me information about refund policies", "search_docs", {"query": "Find information refund policies"}),
    ],
)
def test_a_tool_is_called_when_the_conversation_asks_for_what_it_does(said, tool, arguments):
    result = generate(Prompt(turns=[Turn("user", said)], tools=[WEATHER, CALCULATOR, LOOKUP]))
    assert result.finish == "tool_call" and result.tool_call.name == tool
    assert orjson.loads(result.tool_call.arguments) == arguments
    assert generate(Prompt(turns=[Turn("user", said)], tools=[WEATHER, CALCULATOR, LOOKUP])) == result


def test_tool_choice_auto_required_named_and_none():
    tools = [WEATHER, CALCULATOR]
    chatter = [Turn("user", "tell me a story about a dragon")]
    assert generate(Prompt(turns=chatter, tools=tools)).tool_call is None  # auto: nothing asked for
    assert generate(Prompt(turns=chatter, tools=tools, tool_required=True)).tool_call.name == "get_weather"
    asks = [Turn("user", "what is 2 plus 2?")]
    assert generate(Prompt(turns=asks, tools=tools, tool_required=True)).tool_call.name == "calculator"
    assert generate(Prompt(turns=asks, tools=tools, forced_tool="get_weather")).tool_call.name == "get_weather"
    assert generate(Prompt(turns=asks, tools=tools, tools_disabled=True)).tool_call is None


def test_a_parameter_name_alone_does_not_call_a_tool():
    said = [Turn("user", "which location is best for a picnic?")]
    assert generate(Prompt(turns=said, tools=[WEATHER])).tool_call is None


async def test_chat_tool_choice_and_n(sandbox):
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city",
                                               "parameters": {"type": "object",
                                                              "properties": {"city": {"type": "string"}}}}}]
    body = {"model": "gpt-4o-mini", "tools": tools, "messages": [{"role": "user", "content": "Is it sunny in Rome?"}]}
    called = (await sandbox.post("/v1/chat/completions", headers=OPENAI, json=body)).json()
    assert called["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == '{"city":"Rome"}'
    assert called["choices"][0]["finish_reason"] == "tool_calls"
    none = (await sandbox.post("/v1/chat/completions", headers=OPENAI, json={**body, "tool_choice": "none"})).json()
    assert none["choices"][0]["message"]["content"] == "You said: Is it sunny in Rome?"
    unknown = await sandbox.post("/v1/chat/completions", headers=OPENAI, json={
        **body, "tool_choice": {"type": "function", "function": {"name": "nope"}}})
    assert unknown.status_code == 400 and unknown.json()["error"]["param"] == "tool_choice"
    three = (await sandbox.post("/v1/chat/completions", headers=OPENAI, json={
        "model": "gpt-4o-mini", "n": 3, "messages": [{"role": "user", "content": "hi"}]})).json()
    assert [c["index"] for c in three["choices"]] == [0, 1, 2]
    assert {c["message"]["content"] for c in three["choices"]} == {"You said: hi"}
    assert three["usage"]["completion_tokens"] == 3 * 3
    async with sandbox.stream("POST", "/v1/chat/completions", headers=OPENAI, json={
            "model": "gpt-4o-mini", "n": 2, "stream": True, "messages": [{"role": "user", "content": "hi"}]}) as r:
        chunks = [orjson.loads(e.data) async for e in iter_sse(r.aiter_raw()) if e.data != b"[DONE]"]
    for index in (0, 1):
        text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"][0]["index"] == index)
        assert text == "You said: hi"


async def test_each_answer_names_its_tool_call_anew(sandbox):
    """Asked twice for the same call, each protocol answers with an id of its own each time (the
    vendors' ids are the answer's), while the call itself is the same."""
    weather = {"type": "object", "properties": {"city": {"type": "string"}}}
    said = "Is it sunny in Rome?"
    chat = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": said}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": weather}}]}
    responses = {"model": "gpt-4o-mini", "input": said,
                 "tools": [{"type": "function", "name": "get_weather", "parameters": weather}]}
    messages = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [{"role": "user", "content": said}],
                "tools": [{"name": "get_weather", "input_schema": weather}]}

    async def chat_call(body):
        call = (await sandbox.post("/v1/chat/completions", headers=OPENAI, json=body)).json()
        call = call["choices"][0]["message"]["tool_calls"][0]
        return call["id"], call["function"]["arguments"]

    async def streamed_chat_call(body):
        async with sandbox.stream("POST", "/v1/chat/completions", headers=OPENAI, json={**body, "stream": True}) as r:
            chunks = [orjson.loads(e.data) async for e in iter_sse(r.aiter_raw()) if e.data != b"[DONE]"]
        calls = [c for chunk in chunks for c in chunk["choices"][0]["delta"].get("tool_calls") or ()]
        return calls[0]["id"], "".join(c["function"]["arguments"] for c in calls)

    async def responses_call(body):
        output = (await sandbox.post("/v1/responses", headers=OPENAI, json=body)).json()["output"]
        call = next(item for item in output if item["type"] == "function_call")
        return call["call_id"], call["arguments"]

    async def messages_call(body):
        content = (await sandbox.post("/v1/messages", headers=ANTHROPIC, json=body)).json()["content"]
        block = next(block for block in content if block["type"] == "tool_use")
        return block["id"], orjson.dumps(block["input"]).decode()

    for ask, body, prefix in ((chat_call, chat, "call_"), (streamed_chat_call, chat, "call_"),
                              (responses_call, responses, "call_"), (messages_call, messages, "toolu_")):
        (first, arguments), (second, again) = await ask(body), await ask(body)
        assert arguments == again == '{"city":"Rome"}', ask.__name__
        assert first != second and first.startswith(prefix) and second.startswith(prefix), ask.__name__


async def test_openai_models_call_at_once_and_claude_announces(sandbox):
    """A chosen tool call is the whole answer of an OpenAI model (chat: content null, streamed
    with the call in the opening chunk; responses: the call item alone), while a Claude model
    says what it is doing in a text block before its tool_use, as the real models answer."""
    weather = {"type": "object", "properties": {"city": {"type": "string"}}}
    said = "What is the weather in Oslo?"
    chat = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": said}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": weather}}]}
    message = (await sandbox.post("/v1/chat/completions", headers=OPENAI, json=chat)).json()["choices"][0]
    assert message["finish_reason"] == "tool_calls" and message["message"]["content"] is None
    assert message["message"]["tool_calls"][0]["function"]["name"] == "get_weather"

    async with sandbox.stream("POST", "/v1/chat/completions", headers=OPENAI, json={**chat, "stream": True}) as r:
        deltas = [orjson.loads(e.data)["choices"][0]["delta"] async for e in iter_sse(r.aiter_raw())
                  if e.data != b"[DONE]"]
    opening = deltas[0]
    assert opening["role"] == "assistant" and opening["content"] is None
    assert opening["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": ""}
    assert not any(d.get("content") for d in deltas)
    assert "".join(c["function"]["arguments"] for d in deltas for c in d.get("tool_calls") or ()) == '{"city":"Oslo"}'

    responses = {"model": "gpt-4o-mini", "input": said,
                 "tools": [{"type": "function", "name": "get_weather", "parameters": weather}]}
    output = (await sandbox.post("/v1/responses", headers=OPENAI, json=responses)).json()["output"]
    assert [item["type"] for item in output] == ["function_call"]

    messages = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [{"role": "user", "content": said}],
                "tools": [{"name": "get_weather", "input_schema": weather}]}
    content = (await sandbox.post("/v1/messages", headers=ANTHROPIC, json=messages)).json()["content"]
    assert [block["type"] for block in content] == ["text", "tool_use"]
    assert "get_weather" in content[0]["text"]


async def test_tool_results_must_answer_the_calls_before_them(sandbox):
    """As the vendors: each call of an assistant turn is answered right after it, and a result
    answers a call of the turn before; anything else is the vendor's 400, naming the turn."""
    weather = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
    asked = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}},
        {"id": "call_b", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]}
    user = {"role": "user", "content": "Weather in Rome and Oslo?"}

    def tool(call_id):
        return {"role": "tool", "tool_call_id": call_id, "content": "sunny"}

    async def chat(*messages):
        return await sandbox.post("/v1/chat/completions", headers=OPENAI,
                                  json={"model": "gpt-4o-mini", "tools": [weather], "messages": list(messages)})

    assert (await chat(user, asked, tool("call_b"), tool("call_a"), user)).status_code == 200
    assert (await chat(user, asked, tool("call_a"), tool("call_b"))).status_code == 200
    # Left unanswered whether another message follows or the conversation ends there.
    for unanswered in (await chat(user, asked, tool("call_a"), user), await chat(user, asked, tool("call_a"))):
        assert unanswered.status_code == 400
        assert unanswered.json()["error"]["param"] == "messages.[1].role"
        assert unanswered.json()["error"]["message"].endswith("did not have response messages: call_b")
    assert (await chat(user, asked)).json()["error"]["message"].endswith("response messages: call_a, call_b")
    for stray in ((user, tool("call_a")), (user, asked, tool("call_a"), tool("call_c"))):
        refused = await chat(*stray)
        assert refused.status_code == 400 and refused.json()["error"]["param"] == f"messages.[{len(stray) - 1}].role"
        assert "must be a response to a preceeding message with 'tool_calls'" in refused.json()["error"]["message"]

    used = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {}},
                                             {"type": "tool_use", "id": "toolu_b", "name": "get_weather", "input": {}}]}

    def results(*ids):
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": "sunny"} for i in ids]}

    async def messages(*turns):
        return await sandbox.post("/v1/messages", headers=ANTHROPIC, json={
            "model": "claude-sonnet-4-5", "max_tokens": 100, "messages": list(turns),
            "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}]})

    assert (await messages(user, used, results("toolu_b", "toolu_a"))).status_code == 200
    unanswered = await messages(user, used, results("toolu_a"))
    assert unanswered.status_code == 400
    assert unanswered.json()["error"]["message"].startswith(
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_b.")
    unexpected = await messages(user, used, results("toolu_a", "toolu_b", "toolu_c"))
    assert unexpected.status_code == 400
    assert unexpected.json()["error"]["message"].startswith(
        "messages.2.content.2: unexpected `tool_use_id` found in `tool_result` blocks: toolu_c.")
    again = await messages(user, used, results("toolu_a", "toolu_b"), used, results("toolu_a", "toolu_b"))
    assert again.status_code == 400
    assert again.json()["error"]["message"] == "messages.3.content.0: `tool_use` ids must be unique"
    twice = await sandbox.post("/v1/messages", headers=ANTHROPIC, json={
        "model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [user],
        "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}] * 2})
    assert twice.status_code == 400 and twice.json()["error"]["message"] == "tools: Tool names must be unique."

    call = {"type": "function_call", "call_id": "call_a", "name": "get_weather", "arguments": "{}"}

    def output(call_id):
        return {"type": "function_call_output", "call_id": call_id, "output": "sunny"}

    async def responses(*items):
        return await sandbox.post("/v1/responses", headers=OPENAI, json={
            "model": "gpt-4o-mini", "input": list(items),
            "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]})

    assert (await responses(user, call, output("call_a"))).status_code == 200
    for items, message in (((user, call, user), "No tool output found for function call call_a."),
                           ((user, output("call_a"), call), "No tool call found for function call output with "
                                                            "call_id call_a.")):
        refused = await responses(*items)
        assert refused.status_code == 400 and refused.json()["error"] == {
            "message": message, "type": "invalid_request_error", "param": "input", "code": None}


async def test_json_answers_follow_the_requested_schema(sandbox):
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
              "required": ["city", "days"]}
    chat = (await sandbox.post("/v1/chat/completions", headers=OPENAI, json={
        "model": "gpt-4o-mini", "messages": [{"role": "user", "content": "plan 3 days in Lisbon"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "plan", "schema": schema}}})).json()
    assert orjson.loads(chat["choices"][0]["message"]["content"]) == {"city": "Lisbon", "days": 3}
    responses = (await sandbox.post("/v1/responses", headers=OPENAI, json={
        "model": "gpt-4o-mini", "input": "plan 3 days in Lisbon",
        "text": {"format": {"type": "json_schema", "name": "plan", "schema": schema}}})).json()
    assert orjson.loads(responses["output"][0]["content"][0]["text"]) == {"city": "Lisbon", "days": 3}


async def test_minimum_output_budgets_like_the_vendors(sandbox):
    small = await sandbox.post("/v1/responses", headers=OPENAI, json={
        "model": "gpt-4o-mini", "input": "hi", "max_output_tokens": 15})
    assert small.status_code == 400
    assert small.json()["error"] == {"message": "Invalid 'max_output_tokens': integer below minimum value. Expected a "
                                                "value >= 16, but got 15 instead.", "type": "invalid_request_error",
                                     "param": "max_output_tokens", "code": "integer_below_min_value"}
    one = await sandbox.post("/v1/chat/completions", headers=OPENAI, json={
        "model": "gpt-4o-mini", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]})
    assert one.status_code == 200 and one.json()["choices"][0]["finish_reason"] == "length"
    zero = await sandbox.post("/v1/messages", headers=ANTHROPIC, json={
        "model": "claude-sonnet-4-5", "max_tokens": 0, "messages": [{"role": "user", "content": "hi"}]})
    assert zero.status_code == 400


async def test_messages_count_tokens_matches_the_usage_of_the_call(sandbox):
    body = {"model": "claude-sonnet-4-5", "system": "be brief", "messages": [{"role": "user", "content": "hi there"}]}
    counted = await sandbox.post("/v1/messages/count_tokens", headers=ANTHROPIC, json=body)
    made = await sandbox.post("/v1/messages", headers=ANTHROPIC, json={**body, "max_tokens": 50})
    assert counted.status_code == 200
    assert counted.json() == {"input_tokens": made.json()["usage"]["input_tokens"]}


async def test_tool_fields_of_the_wrong_shape_are_the_vendors_400s(sandbox):
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    chat = {"model": "gpt-4o-mini", "tools": tools, "messages": [{"role": "user", "content": "hi"}]}
    for choice in ({"type": "function", "function": "f"}, {"type": "function", "function": {"name": ["f"]}}):
        refused = await sandbox.post("/v1/chat/completions", headers=OPENAI, json={**chat, "tool_choice": choice})
        assert refused.status_code == 400 and refused.json()["error"]["param"] == "tool_choice", choice
    turns = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": 3}]
    refused = await sandbox.post("/v1/chat/completions", headers=OPENAI, json={**chat, "messages": turns})
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "messages[1].tool_calls"
    named = [{"role": "user", "content": "hi"},
             {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": "f"}]},
             {"role": "tool", "tool_call_id": "c1", "content": "done"}]
    assert (await sandbox.post("/v1/chat/completions", headers=OPENAI,
                               json={**chat, "messages": named})).status_code == 200  # a call it cannot name is skipped

    messages = {"model": "claude-sonnet-4-5", "max_tokens": 50, "tools": [{"name": "f", "input_schema": {}}],
                "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": 5}]}]}
    refused = await sandbox.post("/v1/messages", headers=ANTHROPIC, json=messages)
    assert refused.status_code == 400
    assert refused.json()["error"]["message"].startswith("messages.0.content.0.tool_result.content:")
    forced = {**messages, "messages": [{"role": "user", "content": "hi"}], "tool_choice": {"type": "tool", "name": ["f"]}}
    refused = await sandbox.post("/v1/messages", headers=ANTHROPIC, json=forced)
    assert refused.status_code == 400 and "tool_choice.name" in refused.json()["error"]["message"]


async def test_a_message_field_the_vendor_does_not_know_is_its_400(sandbox):
    """As OpenAI: a field no message of that role has is refused by name, another vendor's
    reasoning (``reasoning_content``) among them; what its own answers held may come back."""
    user = {"role": "user", "content": "hi"}
    answered = await sandbox.post("/v1/chat/completions", headers=OPENAI,
                                  json={"model": "gpt-4o-mini", "messages": [user]})
    own = answered.json()["choices"][0]["message"]
    assert set(own) >= {"refusal", "annotations"}
    again = [user, own, {"role": "user", "content": "more"}]
    assert (await sandbox.post("/v1/chat/completions", headers=OPENAI,
                               json={"model": "gpt-4o-mini", "messages": again})).status_code == 200
    for i, field in ((1, "reasoning_content"), (1, "thinking_blocks"), (0, "tool_calls")):
        messages = [dict(m) for m in again]
        messages[i][field] = [] if field != "reasoning_content" else "I thought."
        refused = await sandbox.post("/v1/chat/completions", headers=OPENAI,
                                     json={"model": "gpt-4o-mini", "messages": messages})
        assert refused.status_code == 400
        assert refused.json()["error"] == {"message": f"Unknown parameter: 'messages[{i}].{field}'.",
                                           "type": "invalid_request_error", "param": f"messages[{i}].{field}",
                                           "code": "unknown_parameter"}
