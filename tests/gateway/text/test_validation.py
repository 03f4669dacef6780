"""Text request checks: required fields, types, bounds and items, each refusal naming its field."""

from __future__ import annotations

import pytest

from studio.core.errors import BadRequest
from studio.gateway.text.validation import validate

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
MESSAGES = {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}
RESPONSES = {"model": "m", "input": "hi"}


def refused(fmt: str, body, param: str) -> BadRequest:
    with pytest.raises(BadRequest) as exc:
        validate(fmt, body)
    assert exc.value.param == param, (exc.value.param, exc.value.message)
    assert exc.value.status == 400 and f"'{param}'" in exc.value.message or param == "body"
    return exc.value


def test_valid_bodies_pass_and_unknown_fields_survive() -> None:
    body = {**CHAT, "temperature": 0, "vendor_only": {"x": 1}}
    assert validate("chat", body) is body
    validate("messages", {**MESSAGES, "system": [{"type": "text", "text": "s"}], "stop_sequences": ["END"]})
    validate("responses", {**RESPONSES, "input": [{"role": "user", "content": "x"}], "max_output_tokens": 16})


def test_body_must_be_an_object() -> None:
    refused("chat", [CHAT], "body")


@pytest.mark.parametrize(("fmt", "body", "missing"), [
    ("chat", {"messages": []}, "model"),
    ("chat", {"model": "m"}, "messages"),
    ("messages", {"model": "m", "messages": []}, "max_tokens"),
    ("responses", {"model": "m"}, "input"),
])
def test_required_fields(fmt: str, body: dict, missing: str) -> None:
    assert "required" in refused(fmt, body, missing).message


@pytest.mark.parametrize(("fmt", "base", "field", "value", "words"), [
    ("chat", CHAT, "temperature", "hot", "a number"),
    ("chat", CHAT, "temperature", True, "a number"),
    ("chat", CHAT, "max_tokens", 1.5, "an integer"),
    ("chat", CHAT, "stream", "yes", "a boolean"),
    ("chat", CHAT, "tools", {}, "an array"),
    ("messages", MESSAGES, "system", 3, "a string or array"),
    ("messages", MESSAGES, "top_k", "5", "an integer"),
    ("responses", RESPONSES, "metadata", [], "an object"),
])
def test_types(fmt: str, base: dict, field: str, value, words: str) -> None:
    assert words in refused(fmt, {**base, field: value}, field).message


@pytest.mark.parametrize(("fmt", "base", "field"), [
    ("chat", CHAT, "max_tokens"), ("chat", CHAT, "n"), ("messages", MESSAGES, "max_tokens"),
    ("responses", RESPONSES, "max_tool_calls"),
])
def test_counts_are_at_least_one(fmt: str, base: dict, field: str) -> None:
    assert "at least 1, got 0" in refused(fmt, {**base, field: 0}, field).message


def test_responses_output_budget_is_at_least_16_like_the_vendor() -> None:
    error = refused("responses", {**RESPONSES, "max_output_tokens": 15}, "max_output_tokens")
    assert "at least 16, got 15" in error.message and error.code == "integer_below_min_value"


def test_a_token_count_needs_no_max_tokens() -> None:
    body = {k: v for k, v in MESSAGES.items() if k != "max_tokens"}
    assert validate("count_tokens", body) is body
    refused("count_tokens", {**body, "messages": []}, "messages")


def test_chat_items() -> None:
    refused("chat", {**CHAT, "messages": []}, "messages")
    refused("chat", {**CHAT, "messages": ["hi"]}, "messages[0]")
    refused("chat", {**CHAT, "messages": [{"role": "robot", "content": "x"}]}, "messages[0].role")
    refused("chat", {**CHAT, "messages": [{"role": "user", "content": "x"}, {"role": "tool", "content": "4"}]},
            "messages[1].tool_call_id")
    refused("chat", {**CHAT, "tools": [{"type": "function", "function": {}}]}, "tools[0].function.name")


def test_messages_items() -> None:
    refused("messages", {**MESSAGES, "messages": []}, "messages")
    refused("messages", {**MESSAGES, "messages": [{"role": "system", "content": "x"}]}, "messages[0].role")
    refused("messages", {**MESSAGES, "messages": [{"role": "user", "content": 5}]}, "messages[0].content")
    refused("messages", {**MESSAGES, "stop_sequences": ["a", 1]}, "stop_sequences")
    refused("messages", {**MESSAGES, "tools": [{"description": "no name"}]}, "tools[0].name")


def test_responses_items() -> None:
    refused("responses", {**RESPONSES, "input": ["text"]}, "input[0]")
    refused("responses", {**RESPONSES, "tools": [{"type": "function"}]}, "tools[0].name")
    validate("responses", {**RESPONSES, "tools": [{"type": "web_search"}]})  # built-in tools need no name


def test_a_role_that_is_not_a_string_is_refused_by_name() -> None:
    for role in (["user"], {"a": 1}, 3, None):
        refused("chat", {**CHAT, "messages": [{"role": role, "content": "hi"}]}, "messages[0].role")
        refused("messages", {**MESSAGES, "messages": [{"role": role, "content": "hi"}]}, "messages[0].role")
        refused("count_tokens", {"model": "m", "messages": [{"role": role, "content": "hi"}]}, "messages[0].role")
