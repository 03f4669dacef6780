"""The text engine called directly: checks, pass-through with the model swapped, translation,
streams relayed with the gateway's own usage request hidden, usage recorded, and a stream the
client leaves charged for what it had been sent."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import orjson
import pytest

from studio.core.errors import BadRequest, CapabilityMissing, GatewayError, NotFound, UpstreamError
from studio.core.principal import Principal
from studio.gateway import admission, recording
from studio.gateway.cost import from_nano
from studio.gateway.text import engine
from studio.gateway.text.tokens import estimate_request_tokens, text_tokens
from studio.models import Budget, Price, UsageRecord
from tests.gateway.client_leaving import post_and_leave
from tests.providers.fake_text_vendor import Answer, json_answer, mounted_vendor, sse_answer

pytestmark = pytest.mark.django_db(transaction=True)

OPENAI = "http://engine-openai.test/v1"
ANTHROPIC = "http://engine-anthropic.test"
COMPLETION = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "vendor-mini",
              "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"},
                           "finish_reason": "stop"}],
              "usage": {"prompt_tokens": 6, "completion_tokens": 2, "total_tokens": 8}, "extra": True}


@pytest.fixture
async def openai(catalog):
    async for fake in mounted_vendor("openai", OPENAI, {"omicron-4-mini": "vendor-mini"}):
        yield fake


@pytest.fixture
async def anthropic(catalog):
    async for fake in mounted_vendor("anthropic", ANTHROPIC, {"epsilon-4.5": "vendor-sonnet"}):
        yield fake


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


async def test_every_relayed_event_names_the_platform_model_whatever_the_upstream_wrote(alice, openai):
    call = await engine.prepare(who(alice), "chat", raw(model="omicron-4-mini", stream=True))
    events = [b'{"id":"c","model":"vendor-mini","choices":[]}',
              b'{"id":"c","model":"vendor-mini","choices":[{"delta":{"content":"\\"model\\":\\"x\\""}}]}',
              b'{"id":"c","model": "vendor-mini-2","choices":[]}',  # another name, spaced
              b'{"id":"c","model":null,"x":{"model":"vendor-mini"}}',  # the first key is no name
              b'{"id":"c","choices":[]}']  # no model at all
    assert [engine._rewrite_model(call, event) for event in events] == [
        b'{"id":"c","model":"omicron-4-mini","choices":[]}',
        b'{"id":"c","model":"omicron-4-mini","choices":[{"delta":{"content":"\\"model\\":\\"x\\""}}]}',
        b'{"id":"c","model":"omicron-4-mini","choices":[]}',
        b'{"id":"c","model":null,"x":{"model":"omicron-4-mini"}}',
        b'{"id":"c","choices":[]}']


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


async def test_events_read_together_go_out_together_and_none_waits_for_the_next_read(alice, openai):
    release = asyncio.Event()
    together = chunk({"role": "assistant", "content": ""}) + chunk({"content": "a"}) + chunk({"content": "b"})

    async def upstream():
        yield together  # one read: three events
        await release.wait()
        yield chunk({"content": "c"})
        yield b"data: [DONE]\n\n"

    openai.answer = lambda request: Answer(content_type="text/event-stream", chunks=upstream())
    call = await engine.prepare(who(alice), "chat", raw(model="omicron-4-mini", stream=True))
    pieces = engine.stream(call)
    first = await asyncio.wait_for(anext(pieces), timeout=10)  # sent before the upstream goes on
    assert first.count(b"data: ") == 3 and b'"content":"b"' in first and b'"omicron-4-mini"' in first
    release.set()
    rest = [piece async for piece in pieces]
    assert [piece.count(b"data: ") for piece in rest] == [1, 1]
    assert b'"content":"c"' in rest[0] and rest[1] == b"data: [DONE]\n\n"


def usage_chunk(**extra) -> bytes:
    return b"data: " + orjson.dumps({"id": "c", "object": "chat.completion.chunk", "model": "vendor-mini", "choices": [],
                                     "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13},
                                     **extra}) + b"\n\n"


# Reads of several chat events each, as an upstream that writes quickly is read.
PLAIN_READS = {
    "usage last": [chunk({"role": "assistant", "content": ""}) + chunk({"content": "a"}) + chunk({"content": "b"}),
                   chunk({"content": "c"}) + usage_chunk() + b"data: [DONE]\n\n"],
    "usage first": [usage_chunk() + chunk({"content": "a"}), chunk({"content": "b"}) + b"data: [DONE]\n\n"],
    "another name": [chunk({"content": "a"}) + chunk({"content": "b"}, model="vendor-mini-2") + chunk({"content": "c"}),
                     b"data: [DONE]\n\n"],
    "names in text": [chunk({"content": "a"}) + chunk({"content": '"model":"vendor-mini" and \\"model\\":\\"x\\"'}),
                      chunk({"content": "b"}, x={"model": "vendor-mini"}) + usage_chunk() + b"data: [DONE]\n\n"],
    # The upstream's model name as long as the platform's ("omicron-4-mini"): the piece does not grow.
    "same length": [chunk({"content": "a"}, model="vendor-mini-14") + chunk({"content": "b"}, model="vendor-mini-14"),
                    chunk({"content": "c"}, model="vendor-mini-14") + usage_chunk(model="vendor-mini-14")
                    + b"data: [DONE]\n\n"],
    "same length, another name": [chunk({"content": "a"}, model="vendor-mini-14")
                                  + chunk({"content": "b"}, model="vendor-mini-15") + chunk({"content": "c"}),
                                  b"data: [DONE]\n\n"],
    "no model": [b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"a"}}]}\n\n' + chunk({"content": "b"}),
                 b"data: [DONE]\n\n"],
    "error after text": [chunk({"content": "a"}) + chunk({"content": "b"})
                         + b'data: {"error":{"message":"overloaded","type":"server_error"}}\n\n'],
}


async def relay(call) -> tuple[list[bytes], str | None]:
    pieces, failed = [], None
    try:
        async for piece in engine.stream(call):
            pieces.append(piece)
    except GatewayError as exc:
        failed = str(exc)
    return pieces, failed


async def with_and_without(monkeypatch, name: str, reference, account, fmt: str, body: bytes) -> list[tuple]:
    """What a stream relays (pieces, error, tokens, cost, text counted) with ``engine.<name>`` as it
    is, then with ``reference`` in its place (the relay that looks at every event one by one)."""
    outcomes = []
    for whole in (True, False):
        if not whole:
            monkeypatch.setattr(engine, name, reference)
        call = await engine.prepare(who(account), fmt, body)
        pieces, failed = await relay(call)
        record = call.record
        outcomes.append((pieces, failed, record.input_tokens, record.output_tokens, record.cost_usd,
                         call.sent_text.text()))
    return outcomes


@pytest.mark.parametrize("include_usage", [True, False], ids=["usage asked", "usage injected"])
@pytest.mark.parametrize("name", list(PLAIN_READS))
async def test_reads_of_plain_events_go_out_as_the_event_by_event_relay_sends_them(alice, openai, monkeypatch, name,
                                                                                  include_usage):
    openai.answer = lambda request: sse_answer(PLAIN_READS[name])
    options = {"stream_options": {"include_usage": True}} if include_usage else {}
    outcomes = await with_and_without(monkeypatch, "_plain_chat", lambda *args: (0, b""), alice, "chat",
                                      raw(model="omicron-4-mini", stream=True, **options))
    assert outcomes[0] == outcomes[1]
    pieces, failed = outcomes[0][:2]
    events = [orjson.loads(line[6:]) for line in b"".join(pieces).split(b"\n\n") if line.startswith(b"data: {")]
    assert {event.get("model", "omicron-4-mini") for event in events if "error" not in event} == {"omicron-4-mini"}
    assert b'"content":"a"' in pieces[0]
    together = name != "usage first" or include_usage  # else the read's other event is the hidden usage
    assert together == (pieces[0].count(b"data: ") > 1)  # a read's events go out in one piece
    assert (failed is not None) == (name == "error after text")


def named(name: str, data: dict) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


def text_delta(text: str, **extra) -> bytes:
    return named("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "text_delta", "text": text}, **extra})


MESSAGE_START = named("message_start", {"type": "message_start", "message": {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "vendor-sonnet", "content": [],
    "usage": {"input_tokens": 7, "output_tokens": 1}}})
BLOCK_START = named("content_block_start", {"type": "content_block_start", "index": 0,
                                            "content_block": {"type": "text", "text": ""}})
MESSAGE_END = (named("content_block_stop", {"type": "content_block_stop", "index": 0})
               + named("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                         "usage": {"output_tokens": 5}})
               + named("message_stop", {"type": "message_stop"}))
MESSAGE_STREAM = MESSAGE_START + BLOCK_START + b"".join(text_delta(t) for t in "abc") + MESSAGE_END


def responses_event(name: str, number: int, **fields) -> bytes:
    return named(name, {"type": name, "sequence_number": number, **fields})


RESPONSE = {"id": "resp_1", "object": "response", "model": "vendor-mini", "status": "in_progress", "output": []}
ITEM = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}
PART = {"type": "output_text", "text": "", "annotations": []}
DONE_TEXT = 'ab"model": x'
RESPONSES_STREAM = (
    responses_event("response.created", 0, response=RESPONSE)
    + responses_event("response.in_progress", 1, response=RESPONSE)
    + responses_event("response.output_item.added", 2, output_index=0, item=ITEM)
    + responses_event("response.content_part.added", 3, item_id="msg_1", output_index=0, content_index=0, part=PART)
    + b"".join(responses_event("response.output_text.delta", 4 + i, item_id="msg_1", output_index=0,
                               content_index=0, delta=t) for i, t in enumerate(["a", "b", "\"model\": x"]))
    + responses_event("response.output_text.done", 7, item_id="msg_1", text=DONE_TEXT)
    + responses_event("response.content_part.done", 8, item_id="msg_1", output_index=0, content_index=0,
                      part={**PART, "text": DONE_TEXT})
    + responses_event("response.output_item.done", 9, output_index=0, item={
        **ITEM, "status": "completed", "content": [{**PART, "text": DONE_TEXT}]})
    + responses_event("response.completed", 10, response={
        **RESPONSE, "status": "completed", "usage": {"input_tokens": 7, "output_tokens": 5, "total_tokens": 12}}))


def events_of(stream: bytes) -> list[bytes]:
    return [event + b"\n\n" for event in stream.split(b"\n\n")[:-1]]


# Reads of named events, as an upstream that writes quickly (or one event at a time) is read.
NAMED_READS = {
    "messages": {
        "one read": [MESSAGE_STREAM],
        "one event a read": events_of(MESSAGE_STREAM),
        "deltas across reads": [MESSAGE_START + BLOCK_START + text_delta("a"), text_delta("b") + text_delta("c"),
                                MESSAGE_END],
        "a delta naming a model": [MESSAGE_START + BLOCK_START + text_delta("a") + text_delta("b", model="vendor-sonnet")
                                   + text_delta("c") + MESSAGE_END],
        "tool input": [MESSAGE_START + named("content_block_start", {
            "type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}})
            + named("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
                "type": "input_json_delta", "partial_json": '{"model": "x", '}})
            + named("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
                "type": "input_json_delta", "partial_json": '"y": 1}'}}) + MESSAGE_END],
        "a name not in ASCII": [MESSAGE_START + text_delta("a") + named("pïng", {"type": "ping"}) + text_delta("b")
                                + text_delta("c") + MESSAGE_END],
        "an error after text": [MESSAGE_START + BLOCK_START + text_delta("a") + text_delta("b") + named(
            "error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})],
        "lone data lines among them": [MESSAGE_START + b'data: {"type":"ping"}\n\n' + text_delta("a") + MESSAGE_END],
    },
    "responses": {
        "one read": [RESPONSES_STREAM],
        "one event a read": events_of(RESPONSES_STREAM),
        "two reads": [b"".join(events_of(RESPONSES_STREAM)[:5]), b"".join(events_of(RESPONSES_STREAM)[5:])],
        "an item naming a model": [RESPONSES_STREAM.replace(b'"role":"assistant"', b'"role":"assistant","model":"vendor-mini"')],
        "objects naming no model": [RESPONSES_STREAM.replace(b'"model":"vendor-mini",', b"")],
    },
}


def _one_by_one(call, leg, read, framed, tap, sent, pending):
    for event in read:
        engine._relay_event(call, leg, event, tap, sent, pending)


@pytest.mark.parametrize(("fmt", "name"), [(fmt, name) for fmt, reads in NAMED_READS.items() for name in reads])
async def test_reads_of_named_events_go_out_as_the_event_by_event_relay_sends_them(alice, anthropic, openai,
                                                                                  monkeypatch, fmt, name):
    vendor, model = (anthropic, "epsilon-4.5") if fmt == "messages" else (openai, "omicron-4-mini")
    vendor.answer = lambda request: sse_answer(NAMED_READS[fmt][name])
    body = (raw(model=model, max_tokens=20, stream=True) if fmt == "messages"
            else orjson.dumps({"model": model, "input": "hi", "stream": True}))
    outcomes = await with_and_without(monkeypatch, "_named_read", _one_by_one, alice, fmt, body)
    assert outcomes[0] == outcomes[1]
    pieces, failed = outcomes[0][:2]
    sent = b"".join(pieces)
    named_models = b"".join(NAMED_READS[fmt][name]).count(b'"model":"vendor-')  # each one renamed
    assert b"vendor-" not in sent and sent.count(b'"model":"' + model.encode()) == named_models
    assert (failed is not None) == (name == "an error after text")
    if failed is None:
        assert outcomes[0][2:4] == (7, 5) and b'"cost_usd"' in sent
    assert len(pieces) == len(NAMED_READS[fmt][name])  # a read's events go out in one piece


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


async def test_a_failure_hook_ends_a_started_stream_and_leaves_an_unstarted_one_to_raise(alice, openai):
    """A stream given ``failure`` ends, once it has sent events, in the hook's frames (given the
    error and how many events went before it), the call recorded as failed; before any event the
    error is raised, for the route's own error answer."""
    error = b'data: {"error":{"message":"overloaded","type":"server_error"}}\n\n'
    seen = []

    def failure(exc: GatewayError, sent: int) -> list[bytes]:
        seen.append((exc.message, sent))
        return [b"data: closing\n\n"]

    openai.answer = lambda request: sse_answer([chunk({"content": "a"}) + chunk({"content": "b"}), chunk({"content": "c"}),
                                                error])
    call = await engine.prepare(who(alice), "chat", raw(model="omicron-4-mini", stream=True))
    pieces = [piece async for piece in engine.stream(call, failure)]
    assert pieces[-1] == b"data: closing\n\n" and sum(p.count(b"data: ") for p in pieces[:-1]) == 3
    assert seen == [("overloaded", 3)]
    assert call.record.error is not None and call.record.error.message == "overloaded"

    openai.answer = lambda request: sse_answer([error])
    call = await engine.prepare(who(alice), "chat", raw(model="omicron-4-mini", stream=True))
    with pytest.raises(GatewayError, match="overloaded"):
        async for _ in engine.stream(call, failure):
            pass
    assert len(seen) == 1 and call.record.error is not None


def test_frame_and_wants_usage() -> None:
    assert engine.frame("chat", "ignored", b"{}") == b"data: {}\n\n"
    assert engine.frame("messages", "ping", b"{}") == b"event: ping\ndata: {}\n\n"
    assert engine.wants_usage("chat", {"stream_options": {"include_usage": True}})
    assert not engine.wants_usage("chat", {"stream_options": {"include_usage": "yes"}})
    assert engine.wants_usage("responses", {})


def responses_event(kind: str, **payload) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps({"type": kind, **payload}) + b"\n\n"


def broken_stream(request: dict) -> Answer:
    """Two pieces of text, then the vendor's error event, in the format of the path called."""
    if request["path"].endswith("/chat/completions"):
        return sse_answer([chunk({"content": "alpha beta"}), chunk({"content": " gamma"}),
                           b'data: {"error":{"message":"overloaded","type":"server_error"}}\n\n'])
    created = {"id": "resp_1", "object": "response", "status": "in_progress", "model": "vendor-mini", "output": []}
    return sse_answer([responses_event("response.created", sequence_number=0, response=created),
                       responses_event("response.output_text.delta", sequence_number=1, item_id="msg_1",
                                       output_index=0, content_index=0, delta="alpha beta"),
                       responses_event("response.output_text.delta", sequence_number=2, item_id="msg_1",
                                       output_index=0, content_index=0, delta=" gamma"),
                       responses_event("error", sequence_number=3, code="server_error", message="overloaded")])


@pytest.mark.parametrize("fmt", ["chat", "responses"])
async def test_a_stream_the_upstream_breaks_records_what_it_used_and_costs_nothing(alice, openai, fmt):
    """An upstream error after events went out: the record keeps the tokens used so far (the
    request's estimate and the text sent, as the upstream's usage never came), at no cost."""
    openai.answer = broken_stream
    body = {"model": "omicron-4-mini", "stream": True}
    body.update({"messages": [{"role": "user", "content": "three letters"}]} if fmt == "chat"
                else {"input": "three letters"})
    call = await engine.prepare(who(alice), fmt, orjson.dumps(body))
    with pytest.raises(UpstreamError, match="overloaded"):
        [piece async for piece in engine.stream(call)]
    assert openai.requests[-1]["path"].endswith("/chat/completions" if fmt == "chat" else "/responses")
    record = call.record
    assert isinstance(record.error, UpstreamError) and record.cost_usd == 0
    assert record.output_tokens == text_tokens("alpha beta gamma") > 0
    assert record.input_tokens == estimate_request_tokens(fmt, call.upstream_body) > 0


# -- a stream the client leaves ------------------------------------------------------------------
async def until_cut(request: dict, frames: list[bytes], release: asyncio.Event):
    for data in frames:
        yield data
    await release.wait()  # the upstream keeps the stream open until the test ends


async def spent_on(budget) -> Decimal:
    from studio.gateway import counters

    (held,) = await counters.get().add([(f"b:{budget.id}:0", 0, 0)])
    return from_nano(held)


async def test_a_stream_the_client_leaves_is_charged_for_what_it_sent(alice, openai):
    budget = await Budget.objects.acreate(api_key=alice.key, limit_usd=Decimal("10"), period="total")
    release = asyncio.Event()
    frames = [chunk({"role": "assistant", "content": ""}), chunk({"content": "alpha"}),
              chunk({"content": " beta,"}), chunk({"content": " gamma"})]
    openai.answer = lambda request: Answer(content_type="text/event-stream", chunks=until_cut(request, frames, release))
    body = {"model": "omicron-4-mini", "stream": True,
            "messages": [{"role": "user", "content": "tell me three Greek letters"}]}
    try:
        seen = await post_and_leave("/v1/chat/completions", alice, body, b"gamma")
        await recording.drain()
        await admission.drain()
    finally:
        release.set()
    assert b"[DONE]" not in seen
    row = await UsageRecord.objects.aget(api_key=alice.key)
    assert row.status_code == 499  # the client closed the request
    # No usage came from the upstream: the text sent and the request are estimated.
    assert row.output_tokens == text_tokens("alpha beta, gamma") > 0
    assert row.input_tokens == estimate_request_tokens("chat", body) > 0
    price = await Price.objects.aget(model_id="omicron-4-mini")
    expected = (row.input_tokens * price.input_per_million + row.output_tokens * price.output_per_million) / 1_000_000
    assert row.cost_usd == expected > 0
    assert await spent_on(budget) == row.cost_usd  # the reservation was settled at that cost


@pytest.mark.parametrize(("path", "body"), [
    ("/v1/chat/completions", {"model": "omicron-4-mini", "messages": [{"role": "user", "content": "hi"}]}),
    ("/v1/responses", {"model": "omicron-4-mini", "input": "hi"}),
])
@pytest.mark.parametrize("stall", [False, True], ids=["reading", "stalled"])
async def test_a_stream_the_client_leaves_stops_its_upstream_call_before_the_request_ends(alice, openai, path, body,
                                                                                         stall):
    """The vendor is told to stop (its connection closed) while the request is ending, not when
    the garbage collector finds the relay, so it stops writing and billing at once; relayed as it
    is and translated alike."""
    release, vendor_tasks = asyncio.Event(), []
    frames = [b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"vendor-mini","choices":'
              b'[{"index":0,"delta":{"role":"assistant","content":"alpha beta"},"finish_reason":null}]}\n\n']

    async def watched(request: dict):
        vendor_tasks.append(asyncio.current_task())
        async for frame in until_cut(request, frames, release):
            yield frame

    openai.answer = lambda request: Answer(content_type="text/event-stream", chunks=watched(request))
    try:
        await post_and_leave(path, alice, {**body, "stream": True}, b"alpha beta", stall=stall)
        [task] = vendor_tasks
        assert task.done() or task.cancelling()  # already on its way out when the request ended
    finally:
        release.set()
    await recording.drain()


async def test_a_cut_stream_keeps_the_input_tokens_the_upstream_reported(alice, anthropic):
    release = asyncio.Event()
    frames = [
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"vendor-sonnet",'
        b'"usage":{"input_tokens":40,"output_tokens":1}}}\n\n',
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"text","text":""}}\n\n',
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"one two three four five"}}\n\n',
    ]
    anthropic.answer = lambda request: Answer(content_type="text/event-stream",
                                              chunks=until_cut(request, frames, release))
    try:
        await post_and_leave("/v1/responses", alice, {"model": "epsilon-4.5", "input": "count", "stream": True},
                             b"five")
        await recording.drain()
        await admission.drain()
    finally:
        release.set()
    row = await UsageRecord.objects.aget(api_key=alice.key)
    # The input count came from the upstream's message_start; the output is the text sent.
    assert (row.status_code, row.input_tokens) == (499, 40)
    assert row.output_tokens == text_tokens("one two three four five")
    assert row.cost_usd > 0


async def test_a_client_gone_before_anything_was_sent_costs_nothing(alice, openai):
    call = await engine.prepare(who(alice), "chat", raw(model="omicron-4-mini", stream=True))
    release = asyncio.Event()
    openai.answer = lambda request: Answer(content_type="text/event-stream", chunks=until_cut(request, [], release))
    task = asyncio.ensure_future(anext(engine.stream(call)))
    while not openai.requests:
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    release.set()
    assert call.record.error.status == 499 and call.record.cost_usd == 0
    assert (call.record.input_tokens, call.record.output_tokens) == (0, 0)
