"""The official ``openai`` SDK's responses.create, streamed and not, against the gateway."""

from __future__ import annotations

import openai
import pytest

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sdk(live_asgi, alice) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{live_asgi}/v1", api_key=alice.secret, max_retries=0)


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
def test_create(sdk, model):
    response = sdk.responses.create(model=model, input="what a day", instructions="be nice")
    assert response.status == "completed" and response.model == model
    assert response.output_text == "You said: what a day"
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
def test_stream(sdk, model):
    events = list(sdk.responses.create(model=model, input="count to 30", max_output_tokens=16, stream=True))
    types = [e.type for e in events]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[-1] == "response.incomplete"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == " ".join(str(i) for i in range(1, 17))
    final = events[-1].response
    assert final.incomplete_details.reason == "max_output_tokens" and final.usage.output_tokens == 16


WEATHER = [{"type": "function", "name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]


def weather_call(sdk, model):
    """A first turn that calls the weather tool: the response and its function call item."""
    first = sdk.responses.create(model=model, input="get_weather for Oslo", tools=WEATHER)
    return first, [item for item in first.output if item.type == "function_call"][0]


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
def test_function_call_round_trip(sdk, model):
    _, call = weather_call(sdk, model)
    assert call.name == "get_weather" and call.arguments == '{"city":"Oslo"}'
    second = sdk.responses.create(model=model, tools=WEATHER, input=[
        {"role": "user", "content": "get_weather for Oslo"},
        {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
        {"type": "function_call_output", "call_id": call.call_id, "output": "snow"}])
    assert second.output_text == "The tool get_weather returned: snow"


def test_mid_stream_failure_raises(sdk):
    with pytest.raises(openai.APIError):
        list(sdk.responses.create(model="epsilon-4.5", input="a b c [fail-midstream] d", stream=True))


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
def test_previous_response_id_continues_a_function_call(sdk, model):
    first, call = weather_call(sdk, model)
    second = sdk.responses.create(model=model, tools=WEATHER, previous_response_id=first.id, input=[
        {"type": "function_call_output", "call_id": call.call_id, "output": "snow"}])
    assert second.output_text == "The tool get_weather returned: snow"
    assert second.previous_response_id == first.id


def test_an_unknown_previous_response_is_the_vendors_400(sdk):
    with pytest.raises(openai.BadRequestError) as exc:
        sdk.responses.create(model="omicron-4-mini", input="hi", previous_response_id="resp_missing")
    assert exc.value.code == "previous_response_not_found" and exc.value.param == "previous_response_id"
    assert exc.value.message.startswith("Error code: 400") and "resp_missing' not found." in exc.value.message


def test_a_claude_models_thinking_comes_back_as_its_reasoning_text(sdk):
    """Claude's thinking, through a chat translation, is the reasoning item's text (not a summary,
    which nobody wrote), buffered and streamed, in the types the SDK knows."""
    answer = sdk.responses.create(model="epsilon-4.5", input="what a day", reasoning={"effort": "low"})
    reasoning, message = answer.output
    assert reasoning.type == "reasoning" and reasoning.summary == [] and reasoning.status is None
    assert [part.type for part in reasoning.content] == ["reasoning_text"]
    assert reasoning.content[0].text.startswith("The user wrote") and answer.output_text == "You said: what a day"
    events = list(sdk.responses.create(model="epsilon-4.5", input="what a day", reasoning={"effort": "low"},
                                       stream=True))
    deltas = [e for e in events if e.type == "response.reasoning_text.delta"]
    done = next(e for e in events if e.type == "response.reasoning_text.done")
    assert deltas and "".join(e.delta for e in deltas) == done.text == reasoning.content[0].text
    assert not [e for e in events if e.type.startswith("response.reasoning_summary")]
    parts = [e.part.type for e in events if e.type == "response.content_part.added"]
    assert parts == ["reasoning_text", "output_text"]
    assert events[-1].response.output[0].content[0].text == done.text
    # The next turn, with the reasoning item among the earlier ones, goes on (Claude takes no
    # unsigned reasoning back: the translation to its format leaves it out).
    following = sdk.responses.create(model="epsilon-4.5", previous_response_id=answer.id, input="and tomorrow?",
                                     reasoning={"effort": "low"})
    assert following.status == "completed" and following.output_text == "You said: and tomorrow?"


def test_a_stateless_tool_loop_on_claude_goes_on_thinking(sdk):
    """Codex's way (store off, the reasoning's encrypted content asked for and given back) on a
    Claude model: the loop's next step thinks too, where without the signed thinking Claude would
    have to answer it without (the vendor wants the turn that called the tool to start with it)."""
    asked = {"model": "epsilon-4.5", "tools": WEATHER, "reasoning": {"effort": "low"}, "store": False,
             "include": ["reasoning.encrypted_content"]}
    question = {"role": "user", "content": "get_weather for Oslo"}
    first = sdk.responses.create(input=[question], **asked)
    reasoning, call = first.output[0], first.output[-1]
    assert reasoning.type == "reasoning" and reasoning.encrypted_content and call.type == "function_call"
    replayed = [item.model_dump(exclude_none=True) for item in first.output]
    for stream in (False, True):
        following = sdk.responses.create(input=[question, *replayed, {
            "type": "function_call_output", "call_id": call.call_id, "output": "snow"}], stream=stream, **asked)
        answer = list(following)[-1].response if stream else following
        assert [item.type for item in answer.output] == ["reasoning", "message"]
        assert answer.output_text == "The tool get_weather returned: snow"
        assert answer.output[0].content[0].text and answer.output[0].encrypted_content


@pytest.mark.parametrize("include", [["reasoning.encrypted_content"], []])
def test_switching_a_stateless_conversation_to_an_openai_model_leaves_out_the_gateways_reasoning(sdk, include):
    """Codex's /model from a Claude model to an OpenAI one: the reasoning items the gateway wrote
    (from Claude's thinking) mean nothing to OpenAI, which refuses them (a sealed content it cannot
    verify: 400; an item it never stored: 404), so they are not sent to it; its own are."""
    question = {"role": "user", "content": "get_weather for Oslo"}
    first = sdk.responses.create(model="epsilon-4.5", input=[question], tools=WEATHER, reasoning={"effort": "low"},
                                 store=False, include=include)
    assert first.output[0].type == "reasoning"
    call = first.output[-1]
    conversation = [question, *[item.model_dump(exclude_none=True) for item in first.output],
                    {"type": "function_call_output", "call_id": call.call_id, "output": "snow"}]
    switched = sdk.responses.create(model="omicron-4-mini", input=conversation, tools=WEATHER, store=False,
                                    include=include)
    assert switched.output_text == "The tool get_weather returned: snow"
