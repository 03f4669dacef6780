"""Responses client on a chat completions upstream."""

from __future__ import annotations

from dataclasses import replace

import orjson
import pytest

from studio.core.errors import BadRequest
from studio.gateway.text import responses_to_chat
from studio.gateway.text.responses_to_chat import TRANSLATOR
from tests.gateway.text.helpers import ctx, run_stream

TOOLS = [{"type": "function", "name": "get_weather", "description": "Weather",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}, "strict": True}]


def test_request_input_items_instructions_and_tools():
    body = {
        "model": "platform-model", "instructions": "be brief", "max_output_tokens": 40, "tools": TOOLS,
        "tool_choice": {"type": "function", "name": "get_weather"}, "temperature": 0.1,
        "text": {"format": {"type": "json_schema", "name": "w", "schema": {"type": "object"}, "strict": True}},
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "look"},
                                         {"type": "input_image", "image_url": "https://example.com/a.png"}]},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Rome"}'},
            {"type": "function_call", "call_id": "call_2", "name": "get_weather", "arguments": '{"city":"Oslo"}'},
            {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
            {"type": "function_call_output", "call_id": "call_2", "output": "snow"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
        ],
    }
    out = TRANSLATOR.request(body, ctx(stream=True))
    assert out["model"] == "vendor-model" and out["max_tokens"] == 40 and out["temperature"] == 0.1
    assert out["tools"] == [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather", "parameters": TOOLS[0]["parameters"], "strict": True}}]
    assert out["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert out["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "w", "schema": {"type": "object"}, "strict": True}}
    assert out["stream_options"] == {"include_usage": True}
    assert out["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "look"},
                                     {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'}},
            {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_2", "content": "snow"},
        {"role": "assistant", "content": "done"},
    ]


def test_string_input():
    out = TRANSLATOR.request({"input": "hi"}, ctx())
    assert out["messages"] == [{"role": "user", "content": "hi"}] and "stream" not in out


@pytest.mark.parametrize(("body", "param"), [
    ({"input": "x", "tools": [{"type": "file_search"}]}, "tools[0].type"),
    ({"input": [{"type": "image_generation_call"}]}, "input[0].type"),
])
def test_unsupported_inputs_name_the_field(body, param):
    with pytest.raises(BadRequest) as error:
        TRANSLATOR.request(body, ctx())
    assert error.value.param == param


def test_response_items_usage_and_echoed_fields():
    answer = {"choices": [{"finish_reason": "tool_calls", "message": {
        "content": "checking", "reasoning_content": "why",
        "tool_calls": [{"id": "call_7", "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'}}]}}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 3, "completion_tokens_details": {"reasoning_tokens": 1}}}
    out = TRANSLATOR.response(answer, ctx(request={"instructions": "hi", "tools": TOOLS, "max_output_tokens": 5}))
    assert out["object"] == "response" and out["status"] == "completed" and out["model"] == "platform-model"
    assert [item["type"] for item in out["output"]] == ["reasoning", "message", "function_call"]
    # The upstream's reasoning is the model's own text, not a summary; a reasoning item has no status.
    reasoning = out["output"][0]
    assert reasoning["summary"] == [] and reasoning["content"] == [{"type": "reasoning_text", "text": "why"}]
    assert "status" not in reasoning and reasoning["id"].startswith("rs_")
    assert out["output"][1]["content"][0]["text"] == "checking"
    assert out["output"][2]["call_id"] == "call_7" and out["output"][2]["arguments"] == '{"city":"Rome"}'
    assert out["usage"] == {"input_tokens": 9, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 3,
                            "output_tokens_details": {"reasoning_tokens": 1}, "total_tokens": 12}
    assert out["instructions"] == "hi" and out["tools"] == TOOLS and out["max_output_tokens"] == 5


def test_truncated_answer_is_incomplete():
    out = TRANSLATOR.response({"choices": [{"finish_reason": "length", "message": {"content": "a"}}]}, ctx())
    assert out["status"] == "incomplete" and out["incomplete_details"] == {"reason": "max_output_tokens"}


def chunk(delta=None, finish=None, usage=None):
    data = {"choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage:
        data["usage"] = usage
    return None, data


def test_stream_events_for_text_then_function_call():
    events = [chunk({"role": "assistant", "content": ""}), chunk({"content": "Hi"}), chunk({"content": " there"}),
              chunk({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "f", "arguments": ""}}]}),
              chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a":1}'}}]}),
              chunk({}, "tool_calls"), chunk(usage={"prompt_tokens": 3, "completion_tokens": 4})]
    out = run_stream(TRANSLATOR, events, ctx(stream=True))
    names = [n for n, _ in out]
    assert names == [
        "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
        "response.output_text.delta", "response.output_text.delta", "response.output_text.done",
        "response.content_part.done", "response.output_item.done", "response.output_item.added",
        "response.function_call_arguments.delta", "response.function_call_arguments.done",
        "response.output_item.done", "response.completed"]
    assert [d["sequence_number"] for _, d in out] == list(range(len(out)))
    assert out[6][1]["text"] == "Hi there"
    assert out[9][1]["output_index"] == 1 and out[9][1]["item"]["type"] == "function_call"
    assert out[11][1]["arguments"] == '{"a":1}' and out[11][1]["name"] == "f"
    final = out[-1][1]["response"]
    assert [i["type"] for i in final["output"]] == ["message", "function_call"]
    assert final["usage"]["total_tokens"] == 7 and final["status"] == "completed"


def test_stream_truncated_ends_incomplete():
    out = run_stream(TRANSLATOR, [chunk({"content": "a"}), chunk({}, "length")], ctx(stream=True))
    assert out[-1][0] == "response.incomplete"
    assert out[-1][1]["response"]["incomplete_details"] == {"reason": "max_output_tokens"}


def test_stream_reasoning_is_streamed_as_reasoning_text_before_the_answer():
    events = [chunk({"role": "assistant", "content": ""}), chunk({"reasoning_content": "Think"}),
              chunk({"reasoning_content": "ing."}), chunk({"content": "Hi"}), chunk({}, "stop"),
              chunk(usage={"prompt_tokens": 3, "completion_tokens": 4,
                           "completion_tokens_details": {"reasoning_tokens": 2}})]
    out = run_stream(TRANSLATOR, events, ctx(stream=True))
    assert [n for n, _ in out] == [
        "response.created", "response.in_progress",
        "response.output_item.added", "response.content_part.added", "response.reasoning_text.delta",
        "response.reasoning_text.delta", "response.reasoning_text.done", "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added", "response.content_part.added", "response.output_text.delta",
        "response.output_text.done", "response.content_part.done", "response.output_item.done",
        "response.completed"]
    added, part = out[2][1], out[3][1]
    assert added["item"] == {"type": "reasoning", "id": added["item"]["id"], "summary": [], "content": []}
    assert part["part"] == {"type": "reasoning_text", "text": ""} and part["content_index"] == 0
    assert [d["delta"] for _, d in out[4:6]] == ["Think", "ing."]
    assert out[6][1]["text"] == "Thinking." and out[7][1]["part"] == {"type": "reasoning_text", "text": "Thinking."}
    done = out[8][1]["item"]
    assert done["content"] == [{"type": "reasoning_text", "text": "Thinking."}] and "status" not in done
    assert out[9][1]["item"]["status"] == "in_progress" and out[14][1]["item"]["status"] == "completed"
    final = out[-1][1]["response"]
    assert [i["type"] for i in final["output"]] == ["reasoning", "message"]
    assert final["output"][0]["summary"] == [] and final["usage"]["output_tokens_details"]["reasoning_tokens"] == 2


def test_a_reasoning_item_goes_back_with_the_assistant_turn_it_led_to():
    """Its text (not a summary) becomes that turn's ``reasoning_content``, for a chat upstream that
    wants its reasoning back (DeepSeek's refuses a turn of tool calls without it)."""
    thought = {"type": "reasoning", "summary": [], "content": [
        {"type": "reasoning_text", "text": "Look"}, {"type": "reasoning_text", "text": " it up."}]}
    calls = [{"type": "function_call", "call_id": f"c{n}", "name": "get_weather", "arguments": "{}"} for n in (1, 2)]
    results = [{"type": "function_call_output", "call_id": f"c{n}", "output": "snow"} for n in (1, 2)]
    summary_only = {"type": "reasoning", "summary": [{"type": "summary_text", "text": "a summary"}]}
    answer = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Snow."}]}
    asked = {"role": "user", "content": "weather?"}
    messages = TRANSLATOR.request({"input": [asked, thought, *calls, *results, summary_only, answer]},
                                  ctx())["messages"]
    assert messages[1]["reasoning_content"] == "Look it up." and len(messages[1]["tool_calls"]) == 2
    assert messages[4] == {"role": "assistant", "content": "Snow."}
    # A model that takes no reasoning back is not sent it (OpenAI's refuses it as an unknown parameter).
    unthinking = TRANSLATOR.request({"input": [asked, thought, *calls, *results]}, replace(ctx(), takes_reasoning=False))
    assert "reasoning_content" not in unthinking["messages"][1] and len(unthinking["messages"][1]["tool_calls"]) == 2


def test_an_outputs_parts_give_the_tool_their_text_and_the_turn_their_images():
    """A function call output given as parts: its text is the tool message's (not the list's
    spelling), its images follow in a user message once the turn's tool messages are in."""
    shot = {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}
    messages = TRANSLATOR.request({"input": [
        {"role": "user", "content": "look at both pages"},
        *[{"type": "function_call", "call_id": f"c{n}", "name": "screenshot", "arguments": "{}"} for n in (1, 2)],
        {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "page one"}, shot]},
        {"type": "function_call_output", "call_id": "c2", "output": [{"type": "input_text", "text": "page two"}]},
        {"role": "user", "content": "which is better?"},
    ]}, ctx())["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user", "user"]
    assert messages[2]["content"] == "page one" and messages[3]["content"] == "page two"
    assert messages[4]["content"] == [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]
    alone = TRANSLATOR.request({"input": [{"type": "function_call_output", "call_id": "c1", "output": [shot]}]},
                               ctx())["messages"]
    assert [m["role"] for m in alone] == ["tool", "user"] and alone[0]["content"] == ""


def test_developer_messages_reach_a_chat_upstream_as_system_ones():
    """Every chat upstream takes ``system``; DeepSeek's refuses ``developer`` (Codex sends its
    instructions that way, mid-conversation too)."""
    messages = TRANSLATOR.request({"instructions": "be brief", "input": [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "sandboxed"}]},
        {"role": "user", "content": "hi"}, {"role": "developer", "content": "now read-only"}]}, ctx())["messages"]
    assert messages == [{"role": "system", "content": "be brief"}, {"role": "system", "content": "sandboxed"},
                        {"role": "user", "content": "hi"}, {"role": "system", "content": "now read-only"}]


def test_an_input_file_reaches_a_chat_upstream_as_a_file_part():
    data = "data:application/pdf;base64,JVBERi0x"
    messages = TRANSLATOR.request({"input": [{"role": "user", "content": [
        {"type": "input_text", "text": "read"}, {"type": "input_file", "filename": "a.pdf", "file_data": data}]}]},
        ctx())["messages"]
    assert messages[0]["content"][1] == {"type": "file", "file": {"filename": "a.pdf", "file_data": data}}
    with pytest.raises(BadRequest) as refused:
        TRANSLATOR.request({"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "file-1"}]}]},
                           ctx())
    assert refused.value.param == "input[0].content[0].file_data"


def test_the_reasoning_items_a_translation_writes_are_told_from_a_vendors():
    item = TRANSLATOR.response({"choices": [{"message": {"reasoning_content": "hmm", "content": "ok"}}]},
                               ctx())["output"][0]
    assert item["type"] == "reasoning" and responses_to_chat.own_reasoning(item)
    vendor = {"type": "reasoning", "id": "rs_0b8e4d0c2a6f1e9d0068f1c2a3b4c5d6e7f8091a2b3c4d5e6", "summary": []}
    assert not responses_to_chat.own_reasoning(vendor)
    assert not responses_to_chat.own_reasoning({**item, "type": "message"})
    assert not responses_to_chat.own_reasoning({"type": "reasoning"})
    body = {"input": [{"role": "user", "content": "hi"}, vendor, item]}
    raw = orjson.dumps(body)
    assert responses_to_chat.holds_own_reasoning(body, raw) and responses_to_chat.holds_own_reasoning(body, None)
    assert not responses_to_chat.holds_own_reasoning({"input": body["input"][:2]}, raw)
    assert not responses_to_chat.holds_own_reasoning({"input": "hi"}, None)
    assert responses_to_chat.without_own_reasoning(body["input"]) == body["input"][:2]
