"""Chat completions client on a messages upstream."""

from __future__ import annotations

import base64

import orjson
import pytest

from studio.core.errors import BadRequest
from studio.gateway.text.chat_to_messages import TRANSLATOR, holds_thinking_fields, without_thinking_fields
from tests.gateway.text.helpers import ctx, run_stream

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
                                           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]


def test_request_moves_system_tools_tool_calls_and_results():
    body = {
        "model": "platform-model", "max_completion_tokens": 50, "temperature": 0.2, "stop": "END", "user": "u1",
        "tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "parallel_tool_calls": False,
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "developer", "content": [{"type": "text", "text": "no emojis"}]},
            {"role": "user", "content": [{"type": "text", "text": "weather?"},
                                         {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
            {"role": "assistant", "content": "checking", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'}},
                {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
            {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "snow"}]},
            {"role": "user", "content": "thanks"},
        ],
    }
    out = TRANSLATOR.request(body, ctx())
    assert out["model"] == "vendor-model" and out["max_tokens"] == 50 and out["temperature"] == 0.2
    assert out["system"] == "be brief\n\nno emojis"
    assert out["stop_sequences"] == ["END"] and out["metadata"] == {"user_id": "u1"}
    assert out["tools"] == [{"name": "get_weather", "description": "Weather",
                             "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
    assert out["tool_choice"] == {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True}
    assert [m["role"] for m in out["messages"]] == ["user", "assistant", "user"]
    assert out["messages"][0]["content"][1] == {"type": "image", "source": {
        "type": "base64", "media_type": "image/png", "data": "AAAA"}}
    assert out["messages"][1]["content"][1:] == [
        {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Rome"}},
        {"type": "tool_use", "id": "call_2", "name": "get_weather", "input": {"city": "Oslo"}}]
    assert out["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_1", "content": "sunny"},
        {"type": "tool_result", "tool_use_id": "call_2", "content": "snow"},
        {"type": "text", "text": "thanks"}]
    assert "stream" not in out


def test_request_defaults_max_tokens_and_maps_reasoning_effort():
    out = TRANSLATOR.request({"messages": [{"role": "user", "content": "x"}], "reasoning_effort": "medium"},
                             ctx(stream=True))
    assert out["thinking"] == {"type": "enabled", "budget_tokens": 4096} and out["max_tokens"] > 4096
    assert out["stream"] is True


def test_request_rejects_a_non_url_image():
    with pytest.raises(BadRequest) as error:
        TRANSLATOR.request({"messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "file:///etc/passwd"}}]}]}, ctx())
    assert error.value.param == "messages[0].content[0].image_url.url"


def test_response_with_thinking_text_and_tool_use():
    answer = {"id": "msg_1", "type": "message", "role": "assistant", "model": "vendor-model",
              "content": [{"type": "thinking", "thinking": "hmm", "signature": "s"}, {"type": "text", "text": "ok"},
                          {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Rome"}}],
              "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5,
                                                   "cache_read_input_tokens": 3}}
    out = TRANSLATOR.response(answer, ctx())
    message = out["choices"][0]["message"]
    assert out["model"] == "platform-model" and out["object"] == "chat.completion"
    assert message["content"] == "ok" and message["reasoning_content"] == "hmm"
    assert message["tool_calls"] == [{"id": "toolu_1", "type": "function", "function": {
        "name": "get_weather", "arguments": '{"city":"Rome"}'}}]
    assert out["choices"][0]["finish_reason"] == "tool_calls"
    assert out["usage"]["prompt_tokens"] == 13 and out["usage"]["total_tokens"] == 18


@pytest.mark.parametrize(("stop", "finish"), [("end_turn", "stop"), ("max_tokens", "length"),
                                              ("stop_sequence", "stop"), ("refusal", "content_filter")])
def test_stop_reasons(stop, finish):
    out = TRANSLATOR.response({"content": [], "stop_reason": stop, "usage": {}}, ctx())
    assert out["choices"][0]["finish_reason"] == finish


def test_stream_text_thinking_and_tool_calls_with_usage_chunk():
    events = [
        ("message_start", {"message": {"id": "msg_1", "usage": {"input_tokens": 9, "output_tokens": 1}}}),
        ("ping", {}),
        ("content_block_start", {"index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "thinking_delta", "thinking": "hm"}}),
        ("content_block_start", {"index": 1, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"index": 1, "delta": {"type": "text_delta", "text": "Hi"}}),
        ("content_block_start", {"index": 2, "content_block": {"type": "tool_use", "id": "t1", "name": "f",
                                                               "input": {}}}),
        ("content_block_delta", {"index": 2, "delta": {"type": "input_json_delta", "partial_json": '{"x":'}}),
        ("content_block_delta", {"index": 2, "delta": {"type": "input_json_delta", "partial_json": "2}"}}),
        ("message_delta", {"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 7}}),
        ("message_stop", {}),
    ]
    chunks = [data for name, data in run_stream(TRANSLATOR, events, ctx(stream=True, include_usage=True))]
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert deltas[0] == {"role": "assistant", "content": ""}
    assert deltas[1] == {"reasoning_content": "hm"} and deltas[2] == {"content": "Hi"}
    assert deltas[3]["tool_calls"][0] == {"index": 0, "id": "t1", "type": "function",
                                          "function": {"name": "f", "arguments": ""}}
    assert orjson.loads("".join(d["tool_calls"][0]["function"]["arguments"] for d in deltas[3:6])) == {"x": 2}
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 7
    assert all(c["model"] == "platform-model" and c["object"] == "chat.completion.chunk" for c in chunks)


def test_stream_without_include_usage_has_no_usage_chunk():
    events = [("message_start", {"message": {"id": "m"}}), ("message_delta", {"delta": {"stop_reason": "end_turn"},
                                                                             "usage": {"output_tokens": 1}})]
    chunks = [data for _, data in run_stream(TRANSLATOR, events, ctx(stream=True))]
    assert all(c["choices"] for c in chunks) and not any("usage" in c for c in chunks)


def test_several_choices_cannot_be_served():
    with pytest.raises(BadRequest) as error:
        TRANSLATOR.request({"n": 2, "messages": [{"role": "user", "content": "x"}]}, ctx())
    assert error.value.param == "n"


PLAN = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
JSON_SCHEMA = {"type": "json_schema", "json_schema": {"name": "plan", "schema": PLAN, "strict": True}}


def test_response_format_becomes_a_forced_tool_and_comes_back_as_content():
    body = {"model": "m", "messages": [{"role": "user", "content": "plan"}], "response_format": JSON_SCHEMA}
    upstream = TRANSLATOR.request(body, ctx())
    assert upstream["tools"] == [{"name": "plan", "description": "Give the answer in this JSON shape.",
                                  "input_schema": PLAN}]
    assert upstream["tool_choice"] == {"type": "tool", "name": "plan"}
    answer = {"id": "msg_1", "content": [{"type": "tool_use", "id": "toolu_1", "name": "plan",
                                          "input": {"city": "Rome"}}],
              "stop_reason": "tool_use", "usage": {"input_tokens": 5, "output_tokens": 3}}
    out = TRANSLATOR.response(answer, ctx(request=body))
    choice = out["choices"][0]
    assert choice["message"]["content"] == '{"city":"Rome"}' and "tool_calls" not in choice["message"]
    assert choice["finish_reason"] == "stop"


def test_response_format_next_to_own_tools_and_with_thinking():
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": TOOLS, "response_format": JSON_SCHEMA}
    upstream = TRANSLATOR.request(body, ctx())
    assert [t["name"] for t in upstream["tools"]] == ["get_weather", "plan"]
    assert upstream["tool_choice"] == {"type": "any"}
    thinking = TRANSLATOR.request({**body, "reasoning_effort": "low"}, ctx())
    assert thinking["tool_choice"] == {"type": "auto"} and "plan tool" in thinking["system"]
    plain = TRANSLATOR.request({**body, "response_format": {"type": "json_object"}, "tools": []}, ctx())
    assert plain["tool_choice"] == {"type": "tool", "name": "json_response"}
    with pytest.raises(BadRequest) as bad:
        TRANSLATOR.request({**body, "response_format": {"type": "yaml"}}, ctx())
    assert bad.value.param == "response_format.type"


def test_response_format_stream_and_a_non_object_schema():
    listing = {"type": "json_schema", "json_schema": {"name": "names", "schema": {"type": "array",
                                                                                   "items": {"type": "string"}}}}
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}], "response_format": listing}
    upstream = TRANSLATOR.request(body, ctx())
    assert upstream["tools"][0]["input_schema"]["properties"]["value"]["type"] == "array"
    events = [
        ("message_start", {"message": {"id": "msg_1", "usage": {"input_tokens": 9, "output_tokens": 1}}}),
        ("content_block_start", {"index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "names",
                                                               "input": {}}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"value": ["a",'}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta", "partial_json": ' "b"]}'}}),
        ("content_block_stop", {"index": 0}),
        ("message_delta", {"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 6}}),
        ("message_stop", {}),
    ]
    chunks = [data for _, data in run_stream(TRANSLATOR, events, ctx(stream=True, include_usage=True, request=body))]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert orjson.loads(text) == ["a", "b"]
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "stop"
    assert chunks[-1]["usage"]["prompt_tokens"] == 9


PDF = base64.b64encode(b"%PDF-1.4 a page").decode()


def test_files_become_documents_and_other_parts_are_refused_by_name():
    """A PDF or plain-text file part is the messages format's document (nothing dropped); what the
    format cannot take (a file id, another file type, audio) is a 400 naming the part."""
    def user(*parts):
        return {"messages": [{"role": "user", "content": [{"type": "text", "text": "read"}, *parts]}]}

    blocks = TRANSLATOR.request(user(
        {"type": "file", "file": {"filename": "spec.pdf", "file_data": f"data:application/pdf;base64,{PDF}"}},
        {"type": "file", "file": {"file_data": "data:text/plain;base64," + base64.b64encode(b"notes").decode()}}),
        ctx())["messages"][0]["content"]
    assert blocks[1] == {"type": "document", "title": "spec.pdf",
                         "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}}
    assert blocks[2] == {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "notes"}}
    for part, param in (({"type": "file", "file": {"file_id": "file-1"}}, "messages[0].content[1].file.file_data"),
                        ({"type": "file", "file": {"file_data": "data:image/png;base64,AAAA"}},
                         "messages[0].content[1].file.file_data"),
                        ({"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
                         "messages[0].content[1].type")):
        with pytest.raises(BadRequest) as refused:
            TRANSLATOR.request(user(part), ctx())
        assert refused.value.param == param


def test_what_a_chat_vendor_is_not_sent_is_found_and_left_out():
    """A conversation that goes on with a chat vendor's model after the Claude one holds the
    signed ``thinking_blocks`` (no chat vendor has the field) and Claude's reasoning: the blocks
    are left out, and the reasoning too for a model that cannot think."""
    block = {"type": "thinking", "thinking": "Hm.", "signature": "sig"}
    claude = {"role": "assistant", "content": None, "reasoning_content": "Hm.", "thinking_blocks": [block],
              "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    deepseek = {"role": "assistant", "content": "Hi.", "reasoning_content": "Greet."}
    user = {"role": "user", "content": "hi"}
    body = {"messages": [user, claude, {"role": "tool", "tool_call_id": "t1", "content": "x"}]}
    raw = orjson.dumps(body)
    assert holds_thinking_fields(body, raw, True) and holds_thinking_fields(body, None, False)
    thinking = without_thinking_fields(body["messages"], True)
    assert thinking[1] == {k: v for k, v in claude.items() if k != "thinking_blocks"}
    assert thinking[0] is user and thinking[2] is body["messages"][2]
    assert without_thinking_fields(body["messages"], False)[1] == {"role": "assistant", "content": None,
                                                                   "tool_calls": claude["tool_calls"]}
    assert "thinking_blocks" in claude  # the client's own body is left as it was
    # A thinking chat model's own reasoning goes back to it; one that cannot think is not sent it.
    shown = {"messages": [user, deepseek, user]}
    assert not holds_thinking_fields(shown, orjson.dumps(shown), True)
    assert holds_thinking_fields(shown, orjson.dumps(shown), False)
    assert without_thinking_fields(shown["messages"], False)[1] == {"role": "assistant", "content": "Hi."}
    # The quick look at the raw body: a conversation without either name is not walked.
    plain = {"messages": [user]}
    assert not holds_thinking_fields(plain, orjson.dumps(plain), False)
    assert not holds_thinking_fields({"messages": [user, {"role": "user", "content": "thinking_blocks"}]},
                                     b'{"x":"thinking_blocks"}', True)
