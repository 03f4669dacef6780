"""Choosing the translation for a call: none, a direct pair, or a chain through chat."""

from __future__ import annotations

import pytest

from studio.core.errors import BadRequest
from studio.gateway.text import chat_to_messages, messages_to_chat, responses_to_chat, translators
from studio.gateway.text.translation import Chain
from tests.gateway.text.helpers import ctx, run_stream


def test_native_format_is_never_translated() -> None:
    assert translators.plan("messages", ("chat", "messages")) == ("messages", None)
    assert translators.plan("chat", ("chat",)) == ("chat", None)


def test_direct_pairs() -> None:
    assert translators.plan("chat", ("messages",)) == ("messages", chat_to_messages.TRANSLATOR)
    assert translators.plan("messages", ("chat",)) == ("chat", messages_to_chat.TRANSLATOR)
    assert translators.plan("responses", ("chat",)) == ("chat", responses_to_chat.TRANSLATOR)


def test_first_upstream_format_with_a_direct_pair_wins() -> None:
    assert translators.plan("responses", ("messages", "chat")) == ("chat", responses_to_chat.TRANSLATOR)


def test_chain_through_chat() -> None:
    target, translator = translators.plan("responses", ("messages",))
    assert target == "messages" and isinstance(translator, Chain)
    assert (translator.first, translator.second) == (responses_to_chat.TRANSLATOR, chat_to_messages.TRANSLATOR)
    upstream = translator.request({"model": "m", "input": "hello", "max_output_tokens": 50}, ctx())
    assert upstream["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]
    assert upstream["max_tokens"] == 50 and upstream["model"] == "vendor-model"


def test_unservable_format_is_a_bad_request_on_model() -> None:
    with pytest.raises(BadRequest) as exc:
        translators.plan("chat", ("responses",))
    assert exc.value.param == "model" and "chat" in exc.value.message
    with pytest.raises(BadRequest):
        translators.plan("chat", ())


def test_pair_lookup() -> None:
    assert translators.pair("chat", "messages") is chat_to_messages.TRANSLATOR
    assert translators.pair("messages", "responses") is None


def test_a_chain_reads_the_answer_against_the_middle_request():
    from studio.gateway.text.translators import plan

    _, chain = plan("responses", ("messages",))
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    body = {"model": "m", "input": "x", "text": {"format": {"type": "json_schema", "name": "trip", "schema": schema}}}
    context = ctx(request=body)
    upstream = chain.request(body, context)
    assert upstream["tool_choice"] == {"type": "tool", "name": "trip"}
    answer = {"id": "msg_1", "content": [{"type": "tool_use", "id": "t1", "name": "trip", "input": {"city": "Oslo"}}],
              "stop_reason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 2}}
    out = chain.response(answer, context)
    assert [item["type"] for item in out["output"]] == ["message"]
    assert out["output"][0]["content"][0]["text"] == '{"city":"Oslo"}'


SIGNED = {"type": "thinking", "thinking": "Check the forecast.", "signature": "EqQBCkYIBxgCKkD0vendorsig=="}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}
TOOLS = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]


def _loop_step(output: list[dict], ask: dict) -> dict:
    """The client's next request: its input, the answer's items, the tool's output."""
    call = next(item for item in output if item["type"] == "function_call")
    return {**ask, "input": [*ask["input"], *output,
                             {"type": "function_call_output", "call_id": call["call_id"], "output": "snow"}]}


@pytest.mark.parametrize("include", [["reasoning.encrypted_content"], None])
def test_a_responses_clients_loop_on_claude_keeps_its_signed_thinking(include):
    """Codex on a Claude model: asked for, the signed thinking comes back sealed in the reasoning
    item's encrypted_content (never in the clear), and given back it heads the loop's last turn
    as the vendor signed it, so the next step thinks too; not asked for, the step goes without."""
    ask = {"model": "m", "input": [{"type": "message", "role": "user", "content": "weather in Oslo?"}],
           "reasoning": {"effort": "low"}, "tools": TOOLS, **({"include": include} if include else {})}
    _, chain = translators.plan("responses", ("messages",))
    answer = {"id": "msg_1", "content": [SIGNED, REDACTED, {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                                           "input": {"city": "Oslo"}}],
              "stop_reason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 2}}
    output = chain.response(answer, ctx(request=ask))["output"]
    reasoning = output[0]
    assert reasoning["type"] == "reasoning" and reasoning["content"][0]["text"] == "Check the forecast."
    assert ("encrypted_content" in reasoning) is bool(include)
    if include:
        assert "vendorsig" not in reasoning["encrypted_content"] and "EmwKAhgB" not in reasoning["encrypted_content"]
    following = _loop_step(output, ask)
    upstream = chain.request(following, ctx(request=following))
    turn = upstream["messages"][1]
    assert turn["role"] == "assistant"
    if include:
        assert turn["content"][:2] == [SIGNED, REDACTED] and upstream["thinking"]["type"] == "enabled"
    else:
        assert turn["content"][0]["type"] == "tool_use" and "thinking" not in upstream


def test_a_streamed_answers_signed_thinking_is_sealed_in_its_reasoning_item():
    ask = {"model": "m", "input": [{"type": "message", "role": "user", "content": "weather in Oslo?"}],
           "reasoning": {"effort": "low"}, "tools": TOOLS, "include": ["reasoning.encrypted_content"], "stream": True}
    _, chain = translators.plan("responses", ("messages",))
    events = [
        ("message_start", {"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 3}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "thinking_delta", "thinking": "Check the forecast."}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "signature_delta", "signature": SIGNED["signature"]}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {
            "type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                 "delta": {"type": "input_json_delta", "partial_json": '{"city":"Oslo"}'}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                           "usage": {"output_tokens": 9}}),
        ("message_stop", {"type": "message_stop"})]
    out = run_stream(chain, events, ctx(stream=True, request=ask))
    done = [data["item"] for name, data in out if name == "response.output_item.done"]
    assert [item["type"] for item in done] == ["reasoning", "function_call"]
    assert done[0]["encrypted_content"] and "vendorsig" not in done[0]["encrypted_content"]
    final = out[-1][1]["response"]["output"]
    upstream = chain.request(_loop_step(final, ask), ctx(request=ask))
    assert upstream["messages"][1]["content"][0] == SIGNED and upstream["thinking"]["type"] == "enabled"


def test_a_chat_clients_loop_on_claude_keeps_thinking_with_the_blocks_it_gives_back():
    """A chat client gets Claude's signed thinking as the message's thinking_blocks (streamed once
    each block is signed); a turn that brings them back starts with them and the loop's next step
    thinks; a turn without them (or with blocks nobody signed) goes without, as before."""
    answer = {"id": "msg_1", "content": [SIGNED, REDACTED, {"type": "tool_use", "id": "toolu_1",
                                                           "name": "get_weather", "input": {}}],
              "stop_reason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 2}}
    message = chat_to_messages.TRANSLATOR.response(answer, ctx())["choices"][0]["message"]
    assert message["reasoning_content"] == "Check the forecast." and message["thinking_blocks"] == [SIGNED, REDACTED]
    asked = {"reasoning_effort": "low", "messages": [{"role": "user", "content": "weather?"}]}

    def step(turn):
        return chat_to_messages.TRANSLATOR.request({**asked, "messages": [
            *asked["messages"], turn, {"role": "tool", "tool_call_id": "toolu_1", "content": "snow"}]}, ctx())

    kept = step(message)
    assert kept["messages"][1]["content"][:2] == [SIGNED, REDACTED] and kept["thinking"]["type"] == "enabled"
    for turn in ({k: v for k, v in message.items() if k != "thinking_blocks"},
                 {**message, "thinking_blocks": [{"type": "thinking", "thinking": "made up"}, "junk"]}):
        dropped = step(turn)
        assert dropped["messages"][1]["content"][0]["type"] == "tool_use" and "thinking" not in dropped
    events = [("message_start", {"message": {"id": "msg_1"}}),
              ("content_block_start", {"index": 0, "content_block": {"type": "thinking", "thinking": "",
                                                                     "signature": ""}}),
              ("content_block_delta", {"index": 0, "delta": {"type": "thinking_delta", "thinking": "Check the "}}),
              ("content_block_delta", {"index": 0, "delta": {"type": "thinking_delta", "thinking": "forecast."}}),
              ("content_block_delta", {"index": 0, "delta": {"type": "signature_delta",
                                                             "signature": SIGNED["signature"]}}),
              ("content_block_stop", {"index": 0}),
              ("content_block_start", {"index": 1, "content_block": REDACTED}),
              ("content_block_stop", {"index": 1}),
              ("message_stop", {})]
    deltas = [data["choices"][0]["delta"] for _, data in run_stream(chat_to_messages.TRANSLATOR, events,
                                                                   ctx(stream=True)) if data["choices"]]
    assert [d["thinking_blocks"] for d in deltas if "thinking_blocks" in d] == [[SIGNED], [REDACTED]]
