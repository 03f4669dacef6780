"""The translation contract: the context's ids, chaining two pairs, and the shared helpers."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from studio.gateway.text import chat_to_messages, messages_to_chat, responses_to_chat
from studio.gateway.text.translation import Chain, Context, loads_arguments, text_of
from tests.gateway.text.helpers import ctx, run_stream


@dataclass
class Tagging:
    """A translator that records the context each stage saw and tags what passes through."""

    source: str
    target: str
    seen: list

    def request(self, body, c):
        self.seen.append(("request", c.include_usage))
        return {**body, "path": [*body.get("path", []), f"{self.source}->{self.target}"]}

    def response(self, body, c):
        self.seen.append(("response", c.include_usage))
        return {**body, "path": [*body.get("path", []), f"{self.target}->{self.source}"]}

    async def stream(self, events, c):
        self.seen.append(("stream", c.include_usage))
        async for name, data in events:
            yield name, {**data, "via": [*data.get("via", []), self.source]}


def test_context_id_is_made_once_and_shared_by_prefixes() -> None:
    c = Context(model="m", upstream_model="u", stream=False, include_usage=False)
    assert c.token == ""
    first = c.id("chatcmpl-")
    assert first.startswith("chatcmpl-") and len(first) == len("chatcmpl-") + 24
    assert c.id("msg_")[4:] == first[9:]
    assert Context(model="m", upstream_model="u", stream=False, include_usage=False).id("x") != first


def test_chain_runs_request_forward_response_backward_and_the_middle_carries_usage() -> None:
    seen_first, seen_second = [], []
    chain = Chain(Tagging("responses", "chat", seen_first), Tagging("chat", "messages", seen_second))
    assert (chain.source, chain.target) == ("responses", "messages")
    context = ctx(include_usage=False)
    assert chain.request({}, context)["path"] == ["responses->chat", "chat->messages"]
    assert chain.response({}, context)["path"] == ["messages->chat", "chat->responses"]
    # The first stage's request is made again for the answer: the middle request it is read against.
    assert seen_first == [("request", False), ("request", False), ("response", False)]
    assert seen_second == [("request", True), ("response", True)]
    assert context.include_usage is False  # the caller's context is not changed


def test_chain_streams_through_both_stages_in_order() -> None:
    chain = Chain(Tagging("responses", "chat", []), Tagging("chat", "messages", []))
    out = run_stream(chain, [("a", {}), ("b", {})], ctx(stream=True))
    assert out == [("a", {"via": ["chat", "responses"]}), ("b", {"via": ["chat", "responses"]})]


def test_text_of() -> None:
    assert text_of("plain") == "plain"
    assert text_of([{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "input_text", "text": "b"},
                    {"type": "output_text", "text": "c"}, "junk", {"type": "text", "text": None}]) == "abc"
    assert text_of(None) == "" and text_of(42) == ""


def test_loads_arguments() -> None:
    assert loads_arguments('{"city": "Oslo"}') == {"city": "Oslo"}
    assert loads_arguments({"already": True}) == {"already": True}
    assert loads_arguments("") == {} and loads_arguments(None) == {}
    assert loads_arguments("[1, 2]") == {"value": [1, 2]}
    assert loads_arguments('{"city": ') == {"_raw": '{"city": '}


def test_a_context_for_an_upstream_is_a_copy_with_its_model_name():
    from dataclasses import fields

    ctx = Context(model="omicron-4", upstream_model="", stream=True, include_usage=False, default_max_tokens=99,
                  request={"model": "omicron-4"}, created=1700000000, token="abc")
    leg = ctx.for_upstream("vendor-omicron")
    assert leg is not ctx and ctx.upstream_model == ""
    assert {f.name: getattr(leg, f.name) for f in fields(Context)} == {
        **{f.name: getattr(ctx, f.name) for f in fields(Context)}, "upstream_model": "vendor-omicron"}


@pytest.mark.parametrize(("upstream_model", "field"), [
    ("o4-mini", "max_completion_tokens"), ("o3", "max_completion_tokens"), ("gpt-5.1", "max_completion_tokens"),
    ("openai/gpt-5-mini", "max_completion_tokens"), ("gpt-5-chat-latest", "max_tokens"),
    ("gpt-4o-mini", "max_tokens"), ("deepseek-reasoner", "max_tokens"), ("qwen3-max", "max_tokens")])
def test_an_answer_is_bounded_in_the_field_its_chat_upstream_reads(upstream_model, field):
    """OpenAI's reasoning models refuse ``max_tokens``; DeepSeek's ignore ``max_completion_tokens``:
    a messages or responses client's limit reaches each in the field it honours."""
    context = Context(model="m", upstream_model=upstream_model, stream=False, include_usage=False)
    asked = messages_to_chat.TRANSLATOR.request(
        {"max_tokens": 300, "messages": [{"role": "user", "content": "hi"}]}, context)
    answered = responses_to_chat.TRANSLATOR.request({"max_output_tokens": 300, "input": "hi"}, context)
    other = "max_tokens" if field == "max_completion_tokens" else "max_completion_tokens"
    for out in (asked, answered):
        assert out[field] == 300 and other not in out


@pytest.mark.parametrize(("translator", "body", "field"), [
    (messages_to_chat.TRANSLATOR, {"max_tokens": 2000, "thinking": {"type": "enabled", "budget_tokens": 1024},
                                   "messages": [{"role": "user", "content": "hi"}]}, "reasoning_effort"),
    (messages_to_chat.TRANSLATOR, {"max_tokens": 2000, "thinking": {"type": "adaptive"},
                                   "messages": [{"role": "user", "content": "hi"}]}, "reasoning_effort"),
    (responses_to_chat.TRANSLATOR, {"reasoning": {"effort": "high"}, "input": "hi"}, "reasoning_effort"),
    (chat_to_messages.TRANSLATOR, {"reasoning_effort": "medium", "messages": [{"role": "user", "content": "hi"}]},
     "thinking")])
def test_an_ask_to_think_crosses_only_to_a_model_that_thinks(translator, body, field):
    """A model whose catalog entry says it cannot think answers without thinking: the ask is left
    out rather than sent in a field of the other format that its vendor refuses."""
    thinks = Context(model="m", upstream_model="u", stream=False, include_usage=False)
    cannot = Context(model="m", upstream_model="u", stream=False, include_usage=False, thinks=False)
    assert field in translator.request(body, thinks)
    assert field not in translator.request(body, cannot)
