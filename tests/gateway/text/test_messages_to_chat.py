"""Messages client on a chat completions upstream."""

from __future__ import annotations

from dataclasses import replace

import orjson
import pytest

from studio.core.errors import BadRequest
from studio.gateway.text.messages_to_chat import (
    TRANSLATOR,
    holds_own_thinking,
    sign_thinking,
    without_own_thinking,
)
from tests.gateway.text.helpers import ctx, run_stream

TOOLS = [{"name": "get_weather", "description": "Weather", "input_schema": {
    "type": "object", "properties": {"city": {"type": "string"}}}}]


def test_request_system_images_tools_tool_use_and_results():
    body = {
        "model": "platform-model", "max_tokens": 30, "system": [{"type": "text", "text": "be brief"}],
        "stop_sequences": ["END"], "temperature": 0.5, "top_k": 3, "metadata": {"user_id": "u9"},
        "tools": TOOLS, "tool_choice": {"type": "any", "disable_parallel_tool_use": True},
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image", "source": {
                "type": "base64", "media_type": "image/jpeg", "data": "BBBB"}}]},
            {"role": "assistant", "content": [{"type": "text", "text": "calling"}, {
                "type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Rome"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
                                         {"type": "text", "text": "and tomorrow?"}]},
        ],
    }
    out = TRANSLATOR.request(body, ctx(stream=True))
    assert out["model"] == "vendor-model" and out["max_tokens"] == 30 and out["stop"] == ["END"]
    assert out["user"] == "u9" and "top_k" not in out
    assert out["stream"] is True and out["stream_options"] == {"include_usage": True}
    assert out["tools"] == [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
                                                              "parameters": TOOLS[0]["input_schema"]}}]
    assert out["tool_choice"] == "required" and out["parallel_tool_calls"] is False
    assert out["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "look"},
                                     {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,BBBB"}}]},
        {"role": "assistant", "content": "calling", "tool_calls": [{"id": "toolu_1", "type": "function", "function": {
            "name": "get_weather", "arguments": '{"city":"Rome"}'}}]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "sunny"},
        {"role": "user", "content": "and tomorrow?"},
    ]


def test_response_text_tool_calls_and_usage():
    answer = {"id": "c1", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": "ok", "reasoning_content": "thought",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}]}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 4, "prompt_tokens_details": {"cached_tokens": 2}}}
    out = TRANSLATOR.response(answer, ctx())
    assert out["type"] == "message" and out["model"] == "platform-model" and out["stop_reason"] == "tool_use"
    assert out["content"] == [{"type": "thinking", "thinking": "thought", "signature": sign_thinking("thought")},
                              {"type": "text", "text": "ok"},
                              {"type": "tool_use", "id": "call_1", "name": "f", "input": {"a": 1}}]
    assert out["usage"]["input_tokens"] == 10 and out["usage"]["cache_read_input_tokens"] == 2
    assert out["usage"]["output_tokens"] == 4


def test_length_becomes_max_tokens():
    out = TRANSLATOR.response({"choices": [{"finish_reason": "length", "message": {"content": "a"}}]}, ctx())
    assert out["stop_reason"] == "max_tokens"


def chunk(delta=None, finish=None, usage=None):
    data = {"choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage:
        data["usage"] = usage
    return None, data


def test_stream_rebuilt_as_blocks_with_final_usage():
    events = [chunk({"role": "assistant", "content": ""}), chunk({"content": "Hel"}), chunk({"content": "lo"}),
              chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                     "function": {"name": "f", "arguments": ""}}]}),
              chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a":'}}]}),
              chunk({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}),
              chunk({}, "tool_calls"), chunk(usage={"prompt_tokens": 5, "completion_tokens": 6})]
    out = run_stream(TRANSLATOR, events, ctx(stream=True))
    names = [n for n, _ in out]
    assert names == ["message_start", "ping", "content_block_start", "content_block_delta", "content_block_delta",
                     "content_block_stop", "content_block_start", "content_block_delta", "content_block_delta",
                     "content_block_stop", "message_delta", "message_stop"]
    assert all(data["type"] == name for name, data in out)
    assert out[0][1]["message"]["model"] == "platform-model"
    assert out[6][1] == {"type": "content_block_start", "index": 1, "content_block": {
        "type": "tool_use", "id": "call_1", "name": "f", "input": {}}}
    arguments = "".join(d["delta"]["partial_json"] for n, d in out[7:9])
    assert orjson.loads(arguments) == {"a": 1}
    assert out[-2][1]["delta"]["stop_reason"] == "tool_use"
    assert out[-2][1]["usage"] == {"input_tokens": 5, "output_tokens": 6}


def test_empty_stream_still_well_formed():
    out = run_stream(TRANSLATOR, [], ctx(stream=True))
    assert [n for n, _ in out] == ["message_start", "ping", "message_delta", "message_stop"]


def test_a_checked_thinking_block_goes_back_as_the_turns_reasoning_content():
    """A chat upstream that shows its reasoning wants it back with the turn it led to (DeepSeek's
    refuses a turn of tool calls without it); a turn without thinking carries none."""
    thought = {"type": "thinking", "thinking": "Weigh it.", "signature": sign_thinking("Weigh it.")}
    body = {"max_tokens": 30, "messages": [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": [thought, {"type": "tool_use", "id": "t1", "name": "get_weather",
                                                    "input": {"city": "Oslo"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "snow"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Snow."}]},
        {"role": "user", "content": "thanks"}]}
    messages = TRANSLATOR.request(body, ctx())["messages"]
    assert messages[1] == {"role": "assistant", "content": None, "reasoning_content": "Weigh it.", "tool_calls": [
        {"id": "t1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}}]}
    assert messages[3] == {"role": "assistant", "content": "Snow."}
    # A model that takes no reasoning back is not sent it (OpenAI's refuses it as an unknown
    # parameter): one that cannot think, or one that hides its reasoning (asked to think all the same).
    for hidden in (replace(ctx(), thinks=False, takes_reasoning=False), replace(ctx(), takes_reasoning=False)):
        unthinking = TRANSLATOR.request({**body, "thinking": {"type": "enabled", "budget_tokens": 1024}}, hidden)
        assert "reasoning_content" not in unthinking["messages"][1]
        assert unthinking["messages"][1]["tool_calls"] == messages[1]["tool_calls"]
        assert ("reasoning_effort" in unthinking) is hidden.thinks


def test_omitted_thinking_comes_without_its_text_and_goes_back_with_it():
    """``thinking.display: omitted``: each thinking block's text is left out of the answer (and of
    the stream's deltas) as the vendor does, sealed in its signature, and the block sent back
    empty still gives the upstream its reasoning; a changed seal is refused."""
    ask = {"max_tokens": 300, "thinking": {"type": "enabled", "budget_tokens": 1024, "display": "omitted"},
           "messages": [{"role": "user", "content": "weather?"}]}
    answer = {"choices": [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": "Snow.", "reasoning_content": "Look it up."}}]}
    thought = TRANSLATOR.response(answer, ctx(request=ask))["content"][0]
    assert thought["type"] == "thinking" and thought["thinking"] == ""
    assert "Look it up" not in thought["signature"] and thought["signature"] != sign_thinking("")
    events = [chunk({"role": "assistant", "content": ""}), chunk({"reasoning_content": "Look"}),
              chunk({"reasoning_content": " it up."}), chunk({"content": "Snow."}), chunk({}, "stop")]
    streamed = run_stream(TRANSLATOR, events, ctx(stream=True, request=ask))
    deltas = [data["delta"] for name, data in streamed if name == "content_block_delta"]
    assert [d["type"] for d in deltas] == ["signature_delta", "text_delta"]
    for block in (thought, {"type": "thinking", "thinking": "", "signature": deltas[0]["signature"]}):
        replay = {**ask, "messages": [*ask["messages"], {"role": "assistant", "content": [
            block, {"type": "text", "text": "Snow."}]}, {"role": "user", "content": "sure?"}]}
        assert TRANSLATOR.request(replay, ctx())["messages"][1] == {
            "role": "assistant", "content": "Snow.", "reasoning_content": "Look it up."}
    sealed, middle = thought["signature"], len(thought["signature"]) // 2
    changed = sealed[:middle] + ("A" if sealed[middle] != "A" else "B") + sealed[middle + 1:]
    for signature in (changed, "gAAAAAnot-a-seal", sign_thinking("x")):
        forged = {**ask, "messages": [*ask["messages"], {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "", "signature": signature}]}, {"role": "user", "content": "sure?"}]}
        with pytest.raises(BadRequest, match="signature"):
            TRANSLATOR.request(forged, ctx())


@pytest.mark.parametrize("thinking", ["Claude's thought.", ""])
def test_another_models_thinking_goes_to_a_chat_upstream_as_it_came(thinking):
    """A conversation switched from the Claude model: Claude's blocks (signatures in no form the
    gateway writes, which it cannot check) give the turn their text as its reasoning, for a chat
    upstream that wants it back; a block whose text was omitted gives none, and nothing is refused."""
    claude = {"type": "thinking", "thinking": thinking, "signature": "EqQBCkgIARABGAIiQL2x/claude"}
    body = {"max_tokens": 30, "messages": [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": [claude, {"type": "tool_use", "id": "t1", "name": "get_weather",
                                                   "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "snow"}]}]}
    turn = TRANSLATOR.request(body, ctx())["messages"][1]
    assert turn.get("reasoning_content") == (thinking or None) and turn["tool_calls"][0]["id"] == "t1"


def test_the_gateways_own_thinking_is_left_out_for_a_messages_vendor():
    """Switched to the Claude model, a conversation's blocks the gateway signed are not sent (the
    vendor refuses a signature it did not make); a tool loop's last turn that loses the thinking it
    must start with makes the step go without thinking, the vendor's advice."""
    own = {"type": "thinking", "thinking": "Look it up.", "signature": sign_thinking("Look it up.")}
    sealed = TRANSLATOR.response({"choices": [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": "Hi.", "reasoning_content": "Greet."}}]}, ctx(request={
            "thinking": {"type": "enabled", "display": "omitted"}}))["content"][0]
    claude = {"type": "thinking", "thinking": "Mine.", "signature": "EqQBCkgIARABGAIiQL2x/claude"}
    call = {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}}
    user = {"role": "user", "content": "hi"}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "snow"}]}
    body = {"max_tokens": 99, "thinking": {"type": "enabled", "budget_tokens": 1024}, "messages": [
        user, {"role": "assistant", "content": [sealed, {"type": "text", "text": "Hi."}]}, user,
        {"role": "assistant", "content": [sealed]}, user,
        {"role": "assistant", "content": [own, call]}, result]}
    raw = orjson.dumps(body)
    assert holds_own_thinking(body, raw) and holds_own_thinking(body, None)
    out = without_own_thinking(body)
    assert out["messages"] == [user, {"role": "assistant", "content": [{"type": "text", "text": "Hi."}]}, user,
                               user, {"role": "assistant", "content": [call]}, result]
    assert "thinking" not in out and body["messages"][5]["content"][0] is own  # the client's body as it was
    # Claude's own blocks stay, and with them the thinking; an earlier turn's loss leaves it on.
    kept = {**body, "messages": [user, {"role": "assistant", "content": [own, {"type": "text", "text": "Hi."}]}, user,
                                 {"role": "assistant", "content": [claude, call]}, result]}
    assert without_own_thinking(kept)["thinking"] == body["thinking"]
    assert without_own_thinking(kept)["messages"][3]["content"] == [claude, call]
    claude_only = {**body, "messages": [user, {"role": "assistant", "content": [claude, call]}, result]}
    assert not holds_own_thinking(claude_only, orjson.dumps(claude_only))
    # A block that is not an object is the vendor's to refuse, not a fault here.
    odd = {**body, "messages": [user, {"role": "assistant", "content": ["odd", own, call]}, result]}
    assert without_own_thinking(odd)["messages"][1]["content"] == ["odd", call] and "thinking" not in \
        without_own_thinking(odd)


def test_thinking_asks_a_chat_upstream_for_an_effort():
    """A budget by its size; adaptive thinking by ``output_config.effort`` (Claude's default: high)."""
    def effort(**fields):
        return TRANSLATOR.request({"max_tokens": 9, "messages": [{"role": "user", "content": "x"}], **fields},
                                  ctx()).get("reasoning_effort")

    assert effort(thinking={"type": "enabled", "budget_tokens": 1024}) == "low"
    assert effort(thinking={"type": "enabled", "budget_tokens": 16000}) == "high"
    assert effort(thinking={"type": "adaptive"}) == "high"
    assert effort(thinking={"type": "adaptive"}, output_config={"effort": "low"}) == "low"
    assert effort(thinking={"type": "adaptive", "display": "omitted"}, output_config={"effort": "max"}) == "high"
    assert effort(thinking={"type": "disabled"}) is None and effort() is None


def test_a_tool_results_images_follow_the_tool_messages():
    """A chat tool message holds text only: a screenshot a tool returned reaches the model in the
    user message after the turn's tool messages, not lost."""
    shot = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    messages = TRANSLATOR.request({"max_tokens": 9, "messages": [
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "shot", "input": {}},
                                          {"type": "tool_use", "id": "t2", "name": "shot", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "page one"}, shot]},
            {"type": "tool_result", "tool_use_id": "t2", "content": "page two"}]}]}, ctx())["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assert messages[2]["content"] == "page one"
    assert messages[4]["content"] == [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]


def test_documents_reach_a_chat_upstream_as_files_or_text():
    pdf = {"type": "document", "title": "spec.pdf",
           "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0x"}}
    notes = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "notes"}}
    messages = TRANSLATOR.request({"max_tokens": 9, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "read "}, pdf, notes]}]}, ctx())["messages"]
    assert messages[0]["content"] == [
        {"type": "text", "text": "read "},
        {"type": "file", "file": {"filename": "spec.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"}},
        {"type": "text", "text": "notes"}]
    only_text = TRANSLATOR.request({"max_tokens": 9, "messages": [{"role": "user", "content": [notes]}]}, ctx())
    assert only_text["messages"][0]["content"] == "notes"
    with pytest.raises(BadRequest) as refused:
        TRANSLATOR.request({"max_tokens": 9, "messages": [{"role": "user", "content": [
            {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}}]}]}, ctx())
    assert refused.value.param == "messages[0].content[0].source.type"
