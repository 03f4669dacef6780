"""The official ``anthropic`` SDK's messages.create and messages.stream against the gateway."""

from __future__ import annotations

import anthropic
import pytest

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sdk(live_asgi, alice) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=live_asgi, api_key=alice.secret, max_retries=0,
                               default_headers={"epsilon-version": "2023-06-01"})


@pytest.mark.parametrize("model", ["epsilon-4.5", "omicron-4-mini"])
def test_create(sdk, model):
    message = sdk.messages.create(model=model, max_tokens=100, system="be terse",
                                  messages=[{"role": "user", "content": "good morning"}])
    assert message.model == model and message.role == "assistant"
    assert message.content[0].text == "You said: good morning"
    assert message.stop_reason == "end_turn"
    assert message.usage.output_tokens == 4 and message.usage.input_tokens > 0


@pytest.mark.parametrize("model", ["epsilon-4.5", "omicron-4-mini"])
def test_stream(sdk, model):
    with sdk.messages.stream(model=model, max_tokens=3, messages=[{"role": "user", "content": "count to 9"}]) as s:
        pieces = list(s.text_stream)
        final = s.get_final_message()
    assert "".join(pieces) == "1 2 3" and len(pieces) == 3
    assert final.stop_reason == "max_tokens" and final.usage.output_tokens == 3
    assert final.usage.input_tokens > 0


@pytest.mark.parametrize("model", ["epsilon-4.5", "omicron-4-mini"])
def test_tool_use_stream(sdk, model):
    tools = [{"name": "get_weather", "description": "weather", "input_schema": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
    with sdk.messages.stream(model=model, max_tokens=200, tools=tools,
                             messages=[{"role": "user", "content": "get_weather in Lisbon"}]) as s:
        final = s.get_final_message()
    tool_use = [b for b in final.content if b.type == "tool_use"][0]
    assert tool_use.name == "get_weather" and tool_use.input == {"city": "Lisbon"}
    assert final.stop_reason == "tool_use"


def test_errors(sdk, live_asgi, alice):
    with pytest.raises(anthropic.BadRequestError) as bad:
        sdk.messages.create(model="epsilon-4.5", max_tokens=0, messages=[{"role": "user", "content": "x"}])
    assert bad.value.body["type"] == "error" and "max_tokens" in bad.value.body["error"]["message"]
    with pytest.raises(anthropic.AuthenticationError):
        anthropic.Anthropic(base_url=live_asgi, api_key="wrong", max_retries=0,
                            default_headers={"epsilon-version": "2023-06-01"}).messages.create(
            model="epsilon-4.5", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    failing = sdk.messages.stream(model="epsilon-4.5", max_tokens=50,
                                  messages=[{"role": "user", "content": "one two [fail-midstream] three"}])
    with pytest.raises(anthropic.APIStatusError) as overloaded, failing as s:
        s.get_final_message()
    assert "Overloaded" in str(overloaded.value)


def test_a_messages_client_on_an_openai_reasoning_model_is_bounded_as_it_accepts(sdk):
    """Such a model refuses the chat format's ``max_tokens``: the client's limit reaches it as
    ``max_completion_tokens``, and its hidden reasoning counts in the output tokens."""
    from studio.models import Upstream

    sandbox = Upstream.objects.get(name="Sandbox")
    sandbox.model_map = {**sandbox.model_map, "omicron-4-mini": "o4-mini"}
    sandbox.save()
    message = sdk.messages.create(model="omicron-4-mini", max_tokens=100,
                                  messages=[{"role": "user", "content": "good morning"}])
    assert [block.type for block in message.content] == ["text"]
    assert message.content[0].text == "You said: good morning" and message.stop_reason == "end_turn"
    assert message.usage.output_tokens > 4  # the answer's four, and the reasoning's
    with sdk.messages.stream(model="omicron-4-mini", max_tokens=30,
                             messages=[{"role": "user", "content": "count to 90"}]) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "max_tokens" and final.usage.output_tokens == 30
