"""The official ``openai`` SDK's chat completions against the gateway on a live loopback port."""

from __future__ import annotations

import json

import openai
import pytest

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sdk(live_asgi, alice) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{live_asgi}/v1", api_key=alice.secret, max_retries=0)


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
def test_create(sdk, model):
    completion = sdk.chat.completions.create(
        model=model, messages=[{"role": "system", "content": "be kind"}, {"role": "user", "content": "hi there"}])
    assert completion.model == model
    assert completion.choices[0].message.content == "You said: hi there"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage.total_tokens == completion.usage.prompt_tokens + completion.usage.completion_tokens


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
def test_stream_with_usage(sdk, model):
    stream = sdk.chat.completions.create(
        model=model, stream=True, stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "count to 12"}], max_tokens=6)
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "1 2 3 4 5 6"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "length"
    assert chunks[-1].usage.completion_tokens == 6


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
def test_tools(sdk, model):
    tools = [{"type": "function", "function": {"name": "get_time", "parameters": {
        "type": "object", "properties": {"zone": {"type": "string"}}}}}]
    completion = sdk.chat.completions.create(
        model=model, tools=tools, messages=[{"role": "user", "content": "call get_time in Tokyo"}])
    call = completion.choices[0].message.tool_calls[0]
    assert call.function.name == "get_time" and json.loads(call.function.arguments) == {"zone": "Tokyo"}


def test_a_tool_loop_on_a_thinking_claude_model_goes_on(sdk):
    """A chat message cannot carry Claude's signed thinking back, which the vendor wants of a
    thinking tool loop's last turn: the loop's next step goes without thinking instead of failing."""
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]
    asked = [{"role": "user", "content": "get_weather for Oslo"}]
    first = sdk.chat.completions.create(model="epsilon-4.5", tools=tools, messages=asked, reasoning_effort="low")
    message = first.choices[0].message
    assert message.reasoning_content and message.tool_calls[0].function.name == "get_weather"
    follow = [*asked, message.model_dump(exclude_none=True),
              {"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": "snow"}]
    second = sdk.chat.completions.create(model="epsilon-4.5", tools=tools, messages=follow, reasoning_effort="low")
    assert second.choices[0].message.content == "The tool get_weather returned: snow"
    # The message the SDK gave back kept Claude's signed thinking (thinking_blocks), so the step
    # was thought about too; one written without them goes on without thinking.
    assert message.thinking_blocks[0]["signature"] and second.choices[0].message.reasoning_content
    bare = [*asked, {"role": "assistant", "content": None, "tool_calls": [call.model_dump() for call in
                                                                           message.tool_calls]}, follow[-1]]
    third = sdk.chat.completions.create(model="epsilon-4.5", tools=tools, messages=bare, reasoning_effort="low")
    assert third.choices[0].message.content == "The tool get_weather returned: snow"
    assert not getattr(third.choices[0].message, "reasoning_content", None)
    again = sdk.chat.completions.create(model="epsilon-4.5", reasoning_effort="low", messages=[
        *follow, {"role": "assistant", "content": "Snow."}, {"role": "user", "content": "and tomorrow?"}])
    assert again.choices[0].message.reasoning_content  # a new question, once the loop is over, is thought about

def test_a_conversation_goes_on_with_the_openai_model_after_the_thinking_claude_one(sdk):
    """An agent that switches models mid-loop sends back Claude's answer as the SDK kept it, with
    its signed thinking (``thinking_blocks``) and reasoning: the OpenAI model is not sent them
    (the vendor refuses a message field it does not know), buffered or streamed."""
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]
    asked = [{"role": "user", "content": "get_weather for Oslo"}]
    message = sdk.chat.completions.create(model="epsilon-4.5", tools=tools, messages=asked,
                                          reasoning_effort="low").choices[0].message
    assert message.thinking_blocks and message.reasoning_content
    follow = [*asked, message, {"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": "snow"}]
    second = sdk.chat.completions.create(model="omicron-4-mini", tools=tools, messages=follow)
    assert second.choices[0].message.content == "The tool get_weather returned: snow"
    streamed = sdk.chat.completions.create(model="omicron-4-mini", tools=tools, messages=follow, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in streamed if c.choices) == \
        "The tool get_weather returned: snow"


def test_audio_the_claude_model_cannot_hear_is_refused_by_name(sdk):
    with pytest.raises(openai.BadRequestError) as refused:
        sdk.chat.completions.create(model="epsilon-4.5", messages=[{"role": "user", "content": [
            {"type": "text", "text": "listen"}, {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}]}])
    assert refused.value.body["param"] == "messages[0].content[1].type"

def test_errors_raise_the_sdk_classes(sdk, live_asgi):
    with pytest.raises(openai.NotFoundError) as missing:
        sdk.chat.completions.create(model="no-such-model", messages=[{"role": "user", "content": "x"}])
    assert missing.value.body["param"] == "model" and missing.value.body["code"] == "model_not_found"
    with pytest.raises(openai.BadRequestError) as bad:
        sdk.chat.completions.create(model="delta-3.1-flash-image", messages=[{"role": "user", "content": "x"}])
    assert bad.value.body["code"] == "model_not_supported"
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=f"{live_asgi}/v1", api_key="sk-wrong", max_retries=0).chat.completions.create(
            model="omicron-4-mini", messages=[{"role": "user", "content": "x"}])
    with pytest.raises(openai.APIError, match="error"):
        list(sdk.chat.completions.create(model="omicron-4-mini", stream=True,
                                         messages=[{"role": "user", "content": "a b c [fail-midstream] d e"}]))
