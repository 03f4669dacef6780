"""Every further SDK call a user makes on the text routes, with the official clients at their
default settings (only base URL and key) against the gateway on a live loopback port."""

from __future__ import annotations

import json

import anthropic
import openai
import pytest
from pydantic import BaseModel

from tests.providers.fake_text_vendor import FakeVendor, add_upstream, json_answer

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def oai(live_asgi, alice) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{live_asgi}/v1", api_key=alice.secret, max_retries=0)


@pytest.fixture
def ant(live_asgi, alice) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=live_asgi, api_key=alice.secret, max_retries=0)


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
def test_responses_retrieve_input_items_and_delete(oai, model):
    made = oai.responses.create(model=model, input="keep this one")
    again = oai.responses.retrieve(made.id)
    assert again.id == made.id and again.output_text == "You said: keep this one"
    items = list(oai.responses.input_items.list(made.id))
    assert len(items) == 1 and items[0].type == "message" and items[0].content[0].text == "keep this one"
    oai.responses.delete(made.id)
    with pytest.raises(openai.NotFoundError):
        oai.responses.retrieve(made.id)


class Trip(BaseModel):
    city: str
    days: int


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
def test_chat_with_a_json_schema_response_format(oai, model):
    completion = oai.chat.completions.parse(model=model, response_format=Trip,
                                            messages=[{"role": "user", "content": "plan 4 days in Porto"}])
    assert completion.choices[0].message.parsed == Trip(city="Porto", days=4)
    assert completion.choices[0].finish_reason == "stop"


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
def test_chat_tools_are_called_for_what_they_do(oai, model):
    tools = [{"type": "function", "function": {
        "name": "lookup_weather", "description": "Current weather conditions for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    asked = oai.chat.completions.create(model=model, tools=tools,
                                        messages=[{"role": "user", "content": "Do I need an umbrella in Bergen?"}])
    call = asked.choices[0].message.tool_calls[0]
    assert call.function.name == "lookup_weather" and json.loads(call.function.arguments) == {"city": "Bergen"}
    chatter = oai.chat.completions.create(model=model, tools=tools, messages=[{"role": "user", "content": "hello"}])
    assert chatter.choices[0].message.tool_calls is None
    forced = oai.chat.completions.create(model=model, tools=tools, tool_choice="required",
                                         messages=[{"role": "user", "content": "hello"}])
    assert forced.choices[0].message.tool_calls[0].function.name == "lookup_weather"


def test_messages_count_tokens_and_models_list(ant):
    counted = ant.messages.count_tokens(model="epsilon-4.5", messages=[{"role": "user", "content": "hello there"}])
    made = ant.messages.create(model="epsilon-4.5", max_tokens=20, messages=[{"role": "user", "content": "hello there"}])
    assert counted.input_tokens == made.usage.input_tokens > 0
    models = list(ant.models.list(limit=2))  # the SDK follows after_id to the end
    assert "epsilon-4.5" in {m.id for m in models} and len(models) == len({m.id for m in models}) > 2
    assert ant.models.retrieve("epsilon-4.5").display_name == "Epsilon 4.5"
    with pytest.raises(anthropic.NotFoundError) as missing:
        ant.models.retrieve("no-such-model")
    assert missing.value.request_id and missing.value.body["request_id"] == missing.value.request_id


@pytest.fixture
def beta_vendor(catalog):
    from studio.gateway import routing
    from studio.models import Upstream

    fake = FakeVendor("http://fake-anthropic-sdk-beta.test")
    fake.answer = lambda request: json_answer({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-vendor",
        "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1}})
    fake.mount()
    from asgiref.sync import async_to_sync

    async_to_sync(add_upstream)("anthropic", fake.base_url, {"epsilon-4.5": "claude-vendor"})
    Upstream.objects.filter(name="Sandbox").update(enabled=False)
    routing.reset_health()
    yield fake
    fake.unmount()


def test_beta_messages_send_the_beta_header_upstream(ant, beta_vendor):
    message = ant.beta.messages.create(model="epsilon-4.5", max_tokens=10, betas=["context-1m-2025-08-07"],
                                       messages=[{"role": "user", "content": "x"}])
    assert message.content[0].text == "hi" and message.model == "epsilon-4.5"
    assert beta_vendor.requests[-1]["headers"]["anthropic-beta"] == "context-1m-2025-08-07"
