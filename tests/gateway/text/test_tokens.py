"""Estimated input tokens of a messages request: about four characters a token for words, one per
punctuation mark, a fixed cost per turn and per image; the parts of a request add up."""

from __future__ import annotations

import pytest

from studio.gateway.text.tokens import IMAGE_TOKENS, MESSAGE_OVERHEAD, estimate_input_tokens, text_tokens


@pytest.mark.parametrize(("text", "tokens"), [
    ("", 0), ("hi", 1), ("hello world", 4), ("internationalization", 5), ("a, b!", 4), ("  \n\t ", 0),
    ("naïve café", 3),
])
def test_text_tokens(text: str, tokens: int) -> None:
    assert text_tokens(text) == tokens


def test_text_tokens_add_up_over_words() -> None:
    words = ["the", "quick", "brown", "fox", "jumps"]
    assert text_tokens(" ".join(words)) == sum(text_tokens(word) for word in words)


def user(content) -> dict:
    return {"role": "user", "content": content}


def test_each_turn_costs_its_content_and_the_overhead() -> None:
    assert estimate_input_tokens({"messages": [user("hello world")]}) == MESSAGE_OVERHEAD + 4


def test_turns_system_and_tools_add_up() -> None:
    first, second = user("what is the weather in Paris?"), {"role": "assistant", "content": "Sunny."}
    tool = {"name": "get_weather", "description": "Weather for a city",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}
    alone = [estimate_input_tokens({"messages": [m]}) for m in (first, second)]
    assert estimate_input_tokens({"messages": [first, second]}) == sum(alone)
    with_system = estimate_input_tokens({"system": "Be brief.", "messages": [first, second]})
    assert with_system == sum(alone) + text_tokens("Be brief.")
    with_tool = estimate_input_tokens({"system": "Be brief.", "messages": [first, second], "tools": [tool]})
    assert with_tool > with_system


def test_a_system_prompt_as_blocks_counts_as_its_text() -> None:
    as_text = estimate_input_tokens({"system": "You are a careful assistant.", "messages": []})
    as_blocks = estimate_input_tokens({"system": [{"type": "text", "text": "You are a careful assistant."}],
                                       "messages": []})
    assert as_text == as_blocks == text_tokens("You are a careful assistant.")


def test_content_as_blocks_counts_like_the_same_text() -> None:
    text = "describe this picture"
    assert (estimate_input_tokens({"messages": [user([{"type": "text", "text": text}])]})
            == estimate_input_tokens({"messages": [user(text)]}))


def test_an_image_costs_a_fixed_amount() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * 50_000}}
    with_image = estimate_input_tokens({"messages": [user([{"type": "text", "text": "what is it"}, image])]})
    without = estimate_input_tokens({"messages": [user([{"type": "text", "text": "what is it"}])]})
    assert with_image - without == IMAGE_TOKENS  # the base64 bytes are not counted as text


def test_tool_calls_results_and_thinking_are_counted() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}}
    result_text = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "5"}
    result_blocks = {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "5"}]}
    thinking = {"type": "thinking", "thinking": "two plus three", "signature": "sig"}
    assert estimate_input_tokens({"messages": [{"role": "assistant", "content": [call]}]}) == (
        MESSAGE_OVERHEAD + text_tokens("add") + text_tokens('{"a":2,"b":3}'))
    assert (estimate_input_tokens({"messages": [user([result_text])]})
            == estimate_input_tokens({"messages": [user([result_blocks])]}) == MESSAGE_OVERHEAD + 1)
    assert estimate_input_tokens({"messages": [{"role": "assistant", "content": [thinking]}]}) == (
        MESSAGE_OVERHEAD + text_tokens("two plus three"))


def test_an_empty_or_odd_request_is_at_least_one_token() -> None:
    assert estimate_input_tokens({}) == 1
    assert estimate_input_tokens({"messages": ["not a message", 7]}) == 1
