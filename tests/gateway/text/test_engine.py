"""The text engine called directly: checks, pass-through with the model swapped, translation,
streams relayed with the gateway's own usage request hidden, and usage recorded."""

from __future__ import annotations

import orjson
import pytest

from studio.core.errors import BadRequest, CapabilityMissing, GatewayError, NotFound, UpstreamError
from studio.core.principal import Principal
from studio.gateway import recording
from studio.gateway.text import engine
from studio.models import UsageRecord
from tests.providers.fake_text_vendor import FakeVendor, add_upstream, json_answer, sse_answer

pytestmark = pytest.mark.django_db(transaction=True)

OPENAI = "http://engine-openai.test/v1"
ANTHROPIC = "http://engine-anthropic.test"
COMPLETION = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "vendor-mini",
              "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"},
                           "finish_reason": "stop"}],
              "usage": {"prompt_tokens": 6, "completion_tokens": 2, "total_tokens": 8}, "extra": True}


@pytest.fixture
async def openai(catalog):
    fake = FakeVendor(OPENAI)
    fake.mount()
    await add_upstream("openai", OPENAI, {"omicron-4-mini": "vendor-mini"})
    yield fake
    fake.unmount()


@pytest.fixture
async def anthropic(catalog):
    fake = FakeVendor(ANTHROPIC)
    fake.mount()
    await add_upstream("anthropic", ANTHROPIC, {"epsilon-4.5": "vendor-sonnet"})
    yield fake
    fake.unmount()


def who(account) -> Principal:
    return Principal(user_id=account.user.id, key_id=account.key.id)


def raw(**body) -> bytes:
    return orjson.dumps({"messages": [{"role": "user", "content": "hi"}], **body})


async def test_prepare_refusals_name_the_field(alice, openai):
    with pytest.raises(BadRequest) as exc:
        await engine.prepare(who(alice), "chat", b"{nope")
    assert exc.value.param == "body"
    with pytest.raises(NotFound) as exc:  # an unknown model is a 404 on every family
        await engine.prepare(who(alice), "chat", raw(model="no-such"))
    assert (exc.value.param, exc.value.code) == ("model", "model_not_found")
    with pytest.raises(CapabilityMissing) as exc:
        await engine.prepare(who(alice), "chat", raw(model="kappa-image-1"))
    assert exc.value.code == "model_not_supported" and exc.value.param == "model"
    assert openai.requests == []


async def test_prepare_reads_stream_and_usage_wishes(alice, openai):
    call = await engine.prepare(who(alice), "chat", raw(model="omicron-4-mini", stream=True,
                                                        stream_options={"include_usage": True}))
    assert call.stream and call.ctx.include_usage and call.model_field == b'"model":"omicron-4-mini"'
    plain = await engine.prepare(who(alice), "chat", raw(model="omicron-4-mini"))
    assert not plain.stream and not plain.ctx.include_usage
    messages = await engine.prepare(who(alice), "messages", raw(model="epsilon-4.5", max_tokens=10))
    assert messages.ctx.include_usage  # formats other than chat always carry usage


async def test_complete_passes_through_with_only_the_model_swapped(alice, openai):
    openai.answer = lambda request: json_answer(COMPLETION)
    call = await engine.prepare(who(alice), "chat", raw(model="omicron-4-mini", future_field=[1]))
    out = orjson.loads(await engine.complete(call))
    assert out == {**COMPLETION, "model": "omicron-4-mini"}
    assert openai.requests[0]["body"]["model"] == "vendor-mini"
    assert openai.requests[0]["body"]["future_field"] == [1]
    await recording.drain()
    row = await UsageRecord.objects.aget(api_key=alice.key)
    assert (row.input_tokens, row.output_tokens, row.route) == (6, 2, "chat")


async def test_complete_translates_for_an_upstream_of_another_format(alice, anthropic):
    anthropic.answer = lambda request: json_answer({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "vendor-sonnet",
        "content": [{"type": "text", "text": "bonjour"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 4, "output_tokens": 3}})
    call = await engine.prepare(who(alice), "chat", raw(model="epsilon-4.5"))
    out = orjson.loads(await engine.complete(call))
    assert anthropic.requests[0]["path"] == "/v1/messages"
    assert anthropic.requests[0]["body"]["max_tokens"] > 0  # the messages format requires it
    assert out["object"] == "chat.completion" and out["model"] == "epsilon-4.5"
    assert out["choices"][0]["message"]["content"] == "bonjour"
    assert call.record.input_tokens == 4 and call.record.output_tokens == 3


async def test_invalid_upstream_json_is_a_502(alice, openai):
    from tests.providers.fake_text_vendor import Answer

    openai.answer = lambda request: Answer(body=b"<html>oops</html>")
    call = await engine.prepare(who(alice), "chat", raw(model="omicron-4-mini"))
    with pytest.raises(GatewayError) as exc:
        await engine.complete(call)
    assert exc.value.status == 502 and call.record.error is exc.value


def chunk(delta: dict, **extra) -> bytes:
    return b"data: " + orjson.dumps({"id": "c", "object": "chat.completion.chunk", "model": "vendor-mini",
                                     "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
                                     "usage": None, **extra}) + b"\n\n"


async def test_stream_hides_the_usage_chunk_the_client_did_not_ask_for(alice, openai):
    usage = b'data: {"id":"c","object":"chat.completion.chunk","model":"vendor-mini","choices":[],' \
            b'"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}\n\n'
    openai.answer = lambda request: sse_answer([chunk({"content": "a"}), chunk({"content": "b"}), usage,
                                                b"data: [DONE]\n\n"])
    call = await engine.prepare(who(alice), "chat", raw(model="omicron-4-mini", stream=True))
    pieces = [piece async for piece in engine.stream(call)]
    assert openai.requests[0]["body"]["stream_options"] == {"include_usage": True}
    assert pieces[-1] == b"data: [DONE]\n\n"
    data = [orjson.loads(p[6:]) for p in pieces[:-1]]
    assert [d["choices"][0]["delta"]["content"] for d in data] == ["a", "b"]
    assert all("usage" not in d and d["model"] == "omicron-4-mini" for d in data)
    assert (call.record.input_tokens, call.record.output_tokens) == (9, 4)
    assert call.record.submitted and call.record.error is None


async def test_stream_in_the_clients_format_names_its_events(alice, anthropic):
    events = [
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"vendor-sonnet",'
        b'"usage":{"input_tokens":3,"output_tokens":1}}}\n\n',
        b'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":5}}\n\n',
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ]
    anthropic.answer = lambda request: sse_answer(events)
    call = await engine.prepare(who(alice), "messages", raw(model="epsilon-4.5", max_tokens=20, stream=True))
    pieces = [piece async for piece in engine.stream(call)]
    assert pieces[0].startswith(b"event: message_start\ndata: ")
    assert b'"model":"epsilon-4.5"' in pieces[0]
    assert len(pieces) == 3  # no terminator in the messages format
    assert (call.record.input_tokens, call.record.output_tokens) == (3, 5)


async def test_a_stream_without_any_event_is_an_upstream_error(alice, openai):
    openai.answer = lambda request: sse_answer([b": keep-alive\n\n"])
    call = await engine.prepare(who(alice), "chat", raw(model="omicron-4-mini", stream=True))
    with pytest.raises(UpstreamError):
        [piece async for piece in engine.stream(call)]
    assert isinstance(call.record.error, UpstreamError)


def test_frame_and_wants_usage() -> None:
    assert engine.frame("chat", "ignored", b"{}") == b"data: {}\n\n"
    assert engine.frame("messages", "ping", b"{}") == b"event: ping\ndata: {}\n\n"
    assert engine.wants_usage("chat", {"stream_options": {"include_usage": True}})
    assert not engine.wants_usage("chat", {"stream_options": {"include_usage": "yes"}})
    assert engine.wants_usage("responses", {})
