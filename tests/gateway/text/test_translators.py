"""Choosing the translation for a call: none, a direct pair, or a chain through chat."""

from __future__ import annotations

import pytest

from studio.core.errors import BadRequest
from studio.gateway.text import chat_to_messages, messages_to_chat, responses_to_chat, translators
from studio.gateway.text.translation import Chain
from tests.gateway.text.helpers import ctx


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
