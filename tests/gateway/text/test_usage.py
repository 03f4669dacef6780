"""Token usage read in each text format, from bodies and from streams (the usage tap)."""

from __future__ import annotations

import orjson
import pytest

from studio.gateway.text.usage import StreamedText, UsageTap, from_body
from studio.providers.sse import SSEEvent


def event(data: dict | bytes, name: str | None = None) -> SSEEvent:
    return SSEEvent(data=data if isinstance(data, bytes) else orjson.dumps(data), event=name)


@pytest.mark.parametrize(("fmt", "body", "expected"), [
    ("chat", {"usage": {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42,
                        "prompt_tokens_details": {"cached_tokens": 8}}}, (12, 30, 8)),
    ("messages", {"usage": {"input_tokens": 5, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20,
                            "output_tokens": 7}}, (125, 7, 100)),
    ("responses", {"usage": {"input_tokens": 9, "output_tokens": 4, "total_tokens": 13}}, (9, 4, 0)),
    ("chat", {"usage": None}, (0, 0, 0)),
    ("messages", {"usage": "weird"}, (0, 0, 0)),
    ("responses", {}, (0, 0, 0)),
])
def test_from_body(fmt: str, body: dict, expected: tuple[int, int, int]) -> None:
    assert from_body(fmt, body) == expected


def test_chat_tap_reads_the_usage_chunk_only() -> None:
    tap = UsageTap("chat")
    tap.observe(event({"choices": [{"delta": {"content": "hi"}}], "usage": None}))
    assert (tap.input_tokens, tap.output_tokens) == (0, 0)
    tap.observe(event(b'{"choices":[],"usage": {"prompt_tokens":8,"completion_tokens":2}}'))
    assert (tap.input_tokens, tap.output_tokens) == (8, 2)


def test_messages_tap_combines_start_and_delta() -> None:
    tap = UsageTap("messages")
    tap.observe(event({"type": "message_start", "message": {"usage": {"input_tokens": 20,
                                                                      "cache_read_input_tokens": 5,
                                                                      "output_tokens": 1}}}, "message_start"))
    assert (tap.input_tokens, tap.output_tokens) == (25, 1)
    tap.observe(event({"type": "content_block_delta", "delta": {"text": "x"}}, "content_block_delta"))
    tap.observe(event({"type": "message_delta", "usage": {"output_tokens": 42}}, "message_delta"))
    assert (tap.input_tokens, tap.output_tokens) == (25, 42)
    # Some upstreams repeat the input count in the final delta: it replaces the earlier one.
    tap.observe(event({"type": "message_delta", "usage": {"input_tokens": 30, "output_tokens": 50}},
                      "message_delta"))
    assert (tap.input_tokens, tap.output_tokens) == (30, 50)


@pytest.mark.parametrize("final", ["response.completed", "response.incomplete", "response.failed"])
def test_responses_tap_reads_the_final_event(final: str) -> None:
    tap = UsageTap("responses")
    tap.observe(event({"type": "response.created", "response": {"usage": {"input_tokens": 99}}},
                      "response.created"))
    assert tap.input_tokens == 0
    tap.observe(event({"type": final, "response": {"usage": {"input_tokens": 11, "output_tokens": 6}}}, final))
    assert (tap.input_tokens, tap.output_tokens) == (11, 6)


def test_tap_ignores_undecodable_data() -> None:
    tap = UsageTap("messages")
    tap.observe(event(b"not json", "message_start"))
    tap.observe(event(b"[1, 2]", "message_delta"))
    assert (tap.input_tokens, tap.output_tokens) == (0, 0)


@pytest.mark.parametrize(("fmt", "name", "body"), [
    ("chat", None, {"choices": [], "usage": {"prompt_tokens": 8, "completion_tokens": 2}}),
    ("messages", "message_delta", {"type": "message_delta", "usage": {"output_tokens": 42}}),
    ("responses", "response.completed", {"type": "response.completed", "response": {"usage": {"input_tokens": 1}}}),
])
def test_the_tap_keeps_the_final_event_it_decoded(fmt: str, name: str | None, body: dict) -> None:
    """The relay adds the cost to the event the tap has read, without decoding it a second time."""
    tap = UsageTap(fmt)
    tap.observe(event(body, name))
    assert tap.final and tap.final_event == body
    tap.observe(event(b'{"usage":{ cut short', name))  # final by its kind, but no JSON object
    assert tap.final and tap.final_event == {}


def test_streamed_text_reads_the_text_each_format_sends():
    chat = StreamedText("chat")
    chat.observe(None, {"choices": [{"delta": {"content": "Hello", "reasoning_content": " because",
                                               "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}}]})
    assert chat.text() == "Hello becausef{}"
    relayed = StreamedText("chat")  # relayed bytes: escapes, spacing and non-text values
    relayed.observe_raw(None, orjson.dumps({"choices": [{"delta": {"content": 'say "hi" \\ '}}]}))
    spaced = orjson.dumps({"choices": [{"delta": {"content": "café", "tool_calls": [
        {"function": {"arguments": '{"a":1}'}}]}}]}).replace(b'":', b'": ').replace("é".encode(), b"\\u00e9")
    relayed.observe_raw(None, spaced)
    relayed.observe_raw(None, b'{"choices":[{"delta":{"content":null}}],"usage":{"prompt_tokens":1}}')
    assert relayed.text() == 'say "hi" \\ café{"a": 1}'  # the spacing reached the arguments too
    messages = StreamedText("messages")
    messages.observe_raw("content_block_delta", b'{"delta":{"type":"text_delta","text":"Hi you"}}')
    messages.observe_raw("content_block_start", b'{"content_block":{"type":"text","text":"no"}}')
    assert messages.text() == "Hi you" and messages.tokens() == 2
    responses = StreamedText("responses")
    responses.observe("response.output_text.delta", {"delta": "one"})
    responses.observe("response.output_text.done", {"text": "one"})
    responses.observe_raw("response.function_call_arguments.delta", orjson.dumps({"delta": '{"a":1}'}))
    assert responses.text() == 'one{"a":1}'
    assert StreamedText("chat").tokens() == 0
