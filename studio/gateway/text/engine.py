"""The text engine: chat completions, messages and responses, buffered and streamed.

One code path for every format: check the request, pick upstreams, and per upstream either pass
the body through (the upstream speaks the client's format: only ``model`` is rewritten, unknown
fields survive, the answer's bytes are relayed with the model name swapped back) or translate
through the pair modules. Streams are relayed frame by frame as they arrive, with failover only
before the first frame. Usage is read from the upstream's own counts and recorded off the
response path; a stream the client leaves is charged for what it had been sent (the upstream's
counts if they came, else estimates of the request and of the text sent).

A responses request naming ``previous_response_id`` is the one call that reads the database
before going upstream: the stored conversation is put before its input, and the upstream (which
never saw the gateway's ids) gets the whole input instead of the id.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from studio.core import streams
from studio.core.entries import ModelEntry, UpstreamEntry
from studio.core.errors import (
    SHAPE_ERRORS,
    BadRequest,
    ClientClosedRequest,
    GatewayError,
    UpstreamError,
    unreadable,
)
from studio.core.principal import Principal
from studio.gateway import admission, routing, snapshot
from studio.gateway.auth import resolve_model
from studio.gateway.text import as_is as as_is_names
from studio.gateway.text import own_fields, stored, translators
from studio.gateway.text import validation as text_validation
from studio.gateway.text.record import TextRecord
from studio.gateway.text.sent_events import SentEvents
from studio.gateway.text.translation import Context, Translator
from studio.gateway.text.usage import (
    CHAT_USAGE_MARKS,
    FINAL_RESPONSE_EVENTS,
    StreamedText,
    UsageTap,
    add_cost,
    cut_usage,
    from_body,
)
from studio.gateway.text_checks import refuse_nul
from studio.providers.contracts import Capability, TextUpstream
from studio.providers.registry import capable, text_upstream, vendor_for
from studio.providers.sse import Read, SSEEvent

# Each client format: the path it is served on (for messages) and how its stream is framed.
PATHS = {"chat": "/v1/chat/completions", "messages": "/v1/messages", "responses": "/v1/responses"}
NAMED_EVENTS = {"chat": False, "messages": True, "responses": True}
TERMINATOR = {"chat": b"data: [DONE]\n\n", "messages": b"", "responses": b""}
DEFAULT_MAX_TOKENS = 4096

_MODEL_FIELD = re.compile(rb'"model":\s?"(?:[^"\\]|\\.)*"')
_USAGE_NULL = re.compile(rb',"usage":null|"usage":null,')
_PREVIOUS_NULL = re.compile(rb'"previous_response_id":\s?null')


# A broken stream's closing frames, given the error and how many events were sent before it.
Failure = Callable[[GatewayError, int], list[bytes]]


@dataclass(slots=True)
class TextCall:
    fmt: str
    model: ModelEntry
    upstreams: list[UpstreamEntry]
    body: dict[str, Any]
    stream: bool
    record: TextRecord
    ctx: Context
    model_field: bytes  # '"model":"<platform id>"', swapped into relayed answers
    principal: Principal
    headers: Mapping[str, str] = field(default_factory=dict)  # the client's protocol headers, same-format calls
    # responses: the data of the stream's ``response.created`` event, read (for the id it announced)
    # only if the stream breaks
    created: bytes = b""
    # The body as upstreams get it: the client's, or with a previous response's turns put before
    # its input (``previous_response_id``), which ``context`` then holds.
    upstream_body: dict[str, Any] = field(default_factory=dict)
    context: list[dict[str, Any]] | None = None
    previous_field: bytes = b""  # '"previous_response_id":"<id>"', swapped into relayed answers
    tap: UsageTap | None = None  # the usage seen on the stream being relayed
    sent_text: StreamedText | None = None  # the text that stream has sent the client
    upstream_model_field: bytes = b""  # the upstream's own '"model":"<id>"', once seen
    # the body holds what a translation of the gateway's wrote, which an upstream of the client's
    # own format is not sent (``own_fields``)
    own_fields: bool = False


@dataclass(slots=True)
class Leg:
    """How one upstream is called: in which format, with which body, through which translator."""

    provider: TextUpstream
    target: str
    translator: Translator | None
    body: bytes
    ctx: Context
    usage_injected: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)


def parse(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"the request body is not valid JSON: {exc}", param="body") from exc


def wants_usage(fmt: str, body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return fmt != "chat" or (isinstance(options, dict) and options.get("include_usage") is True)


async def prepare(principal: Principal, fmt: str, raw: bytes, headers: Mapping[str, str] | None = None) -> TextCall:
    """Check the body, the model and the key's allowance; no network, no database.

    ``headers`` (the messages format's ``anthropic-beta``) go to an upstream of the same format.
    """
    body = text_validation.validate(fmt, parse(raw), raw)
    refuse_nul(body, raw)
    snap = await snapshot.get()
    model = resolve_model(snap, principal, body["model"], fmt, use=PATHS[fmt])
    stream = body.get("stream") is True
    upstream_body, context, size = body, None, len(raw)
    previous = body.get("previous_response_id") if fmt == "responses" else None
    if previous:
        context = [*await stored.previous_turns(principal, previous), *stored.own_input(body)]
        upstream_body = {**{k: v for k, v in body.items() if k != "previous_response_id"}, "input": context}
        size += len(orjson.dumps(context))
    default_max = int(model.capabilities.get("default_max_tokens") or DEFAULT_MAX_TOKENS)
    thinking = model.capabilities.get("thinking")
    ctx = Context(model=model.model_id, upstream_model="", stream=stream, include_usage=wants_usage(fmt, body),
                  default_max_tokens=default_max, request=body, thinks=thinking is not False,
                  takes_reasoning=thinking is not False and thinking != "hidden")
    upstreams = capable(routing.candidates(snap, model.model_id), model, Capability.TEXT)
    for upstream in upstreams:
        translators.plan(fmt, upstream_formats(model, upstream))  # a 400 now if no translation reaches it
    estimate, tokens = admission.text_estimate(size, _max_tokens(body, default_max))
    ticket = await admission.admit(principal, model, estimate, tokens=tokens, snap=snap)
    return TextCall(fmt=fmt, model=model, upstreams=upstreams, body=body,
                    stream=stream, record=TextRecord(principal, model.model_id, fmt, stream, ticket=ticket), ctx=ctx,
                    model_field=b'"model":' + orjson.dumps(model.model_id), principal=principal,
                    headers=dict(headers or {}), upstream_body=upstream_body, context=context,
                    previous_field=b'"previous_response_id":' + orjson.dumps(previous) if previous else b"",
                    own_fields=own_fields.held(fmt, upstream_body, None if previous else raw, ctx.takes_reasoning))


def _max_tokens(body: dict[str, Any], default: int) -> int:
    for name in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        value = body.get(name)
        if isinstance(value, int) and value > 0:
            return value
    return default


def upstream_formats(model: ModelEntry, upstream: UpstreamEntry) -> tuple[str, ...]:
    """The text formats the upstream speaks: the catalog's word for the model (a relay that speaks
    fewer or more), else what its protocol speaks natively."""
    return tuple(model.capabilities.get("upstream_formats") or vendor_for(upstream, model).text_formats)


def _leg(call: TextCall, upstream: UpstreamEntry) -> Leg:
    provider = text_upstream(upstream, call.model)
    target, translator = translators.plan(call.fmt, upstream_formats(call.model, upstream))
    ctx = call.ctx.for_upstream(upstream.upstream_model(call.model.model_id))
    if translator is not None:
        return Leg(provider, target, translator, orjson.dumps(translator.request(call.upstream_body, ctx)), ctx)
    body = own_fields.without(call.fmt, call.upstream_body, ctx.takes_reasoning) if call.own_fields else call.upstream_body
    body = {**body, "model": ctx.upstream_model}
    injected = call.stream and call.fmt == "chat" and not ctx.include_usage
    if injected:
        # Ask for the usage chunk the client did not ask for; the relay removes it again.
        options = body.get("stream_options") if isinstance(body.get("stream_options"), dict) else {}
        body["stream_options"] = {**options, "include_usage": True}
    return Leg(provider, target, None, orjson.dumps(body), ctx, usage_injected=injected, headers=call.headers)


def _rewrite_model(call: TextCall, data: bytes) -> bytes:
    """A relayed answer or event with the platform's model name (and, for a responses call that
    continued a stored one, the ``previous_response_id`` the upstream never saw)."""
    at = data.find(b'"model":')
    seen = call.upstream_model_field
    if at >= 0 and seen and data.startswith(seen, at):  # as in the event before: no regex needed
        data = data[:at] + call.model_field + data[at + len(seen):]
    else:
        found = _MODEL_FIELD.search(data)
        if found is not None:
            call.upstream_model_field = found.group()
            data = data[:found.start()] + call.model_field + data[found.end():]
    if call.previous_field:
        data = _PREVIOUS_NULL.sub(lambda _: call.previous_field, data, count=1)
    return data


async def complete(call: TextCall) -> bytes:
    """A buffered call with failover; answers in the client's format."""
    async def attempt(up: UpstreamEntry) -> tuple[Leg, bytes]:
        leg = _leg(call, up)
        return leg, await leg.provider.text_request(leg.target, leg.body, leg.headers)

    record = call.record
    try:
        upstream, (leg, raw) = await routing.with_failover(call.upstreams, attempt)
        record.upstream_id = upstream.id
        record.first_chunk()
        answer = parse_upstream(raw)
        try:
            record.usage(*from_body(leg.target, answer))
            if leg.translator is None:
                out = _rewrite_model(call, raw)
                answer["model"] = call.model.model_id
            else:
                answer = leg.translator.response(answer, leg.ctx)
                out = orjson.dumps(answer)
        except SHAPE_ERRORS as exc:
            raise unreadable(exc) from exc
        if call.fmt == "responses":
            if call.previous_field:
                answer["previous_response_id"] = call.body["previous_response_id"]
            stored.keep(call.principal, call.model.model_id, call.body, leg.ctx, answer, call.context)
    except GatewayError as exc:
        record.fail(exc)
        raise
    record.finish()
    return out


def parse_upstream(raw: bytes) -> dict[str, Any]:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise GatewayError(f"the upstream answered with invalid JSON: {exc}", status=502) from exc
    if not isinstance(value, dict):
        raise GatewayError("the upstream answered with an unexpected body", status=502)
    return value


def frame(fmt: str, name: str | None, data: bytes) -> bytes:
    if NAMED_EVENTS[fmt] and name:
        return b"event: " + name.encode() + b"\ndata: " + data + b"\n\n"
    return b"data: " + data + b"\n\n"


async def _relay(call: TextCall, leg: Leg) -> AsyncIterator[bytes]:
    """One upstream's stream as client frames; usage is recorded however the stream ends."""
    tap = call.tap = UsageTap(leg.target)
    sent = call.sent_text = StreamedText(call.fmt)
    events = leg.provider.text_stream(leg.target, leg.body, leg.headers)
    try:
        if leg.translator is None:
            # The upstream speaks the client's format: each read goes out as one piece
            # (``_passthrough``), what came before an error in it first.
            async for read in events:
                pending: list[bytes] = []
                try:
                    _passthrough(call, leg, read, tap, sent, pending)
                except (GatewayError, *SHAPE_ERRORS):
                    if pending:
                        yield b"".join(pending)
                    raise
                if pending:
                    yield pending[0] if len(pending) == 1 else b"".join(pending)
        else:
            async def decoded() -> AsyncIterator[tuple[str | None, dict[str, Any]]]:
                async for read in events:
                    for event in read:
                        tap.observe(event)
                        try:
                            yield event.event, orjson.loads(event.data)
                        except orjson.JSONDecodeError:
                            continue  # keep-alive noise; the vendors send JSON only
            async for name, data in leg.translator.stream(decoded(), leg.ctx):
                if call.fmt == "responses" and name in FINAL_RESPONSE_EVENTS:  # kept as the vendor's, without the cost
                    _seen_response(call, leg, data.get("response") or {})
                if call.record.ticket is not None:
                    add_cost(call.fmt, name, data, _quote(call, tap))
                sent.observe(name, data)
                out = orjson.dumps(data)
                if name == "response.created" and call.fmt == "responses":
                    call.created = out
                yield frame(call.fmt, name, out)
    except SHAPE_ERRORS as exc:  # an event that is not of its protocol's shape
        raise unreadable(exc, "stream") from exc
    finally:
        await streams.close(events)  # left early: the upstream's connection goes now
        if not call.record.submitted:  # a stream the client left was recorded already
            call.record.usage(tap.input_tokens, tap.output_tokens, tap.cached_tokens)


def _passthrough(call: TextCall, leg: Leg, read: Read, tap: UsageTap, sent: StreamedText,
                 pending: list[bytes]) -> None:
    """One read of an upstream stream in the client's own format into ``pending``, event by event
    (the model name rewritten, the cost added to the final usage). The read's events go out as
    one piece, as a byte relay would send them: one write to the client, not one per event, and
    no event waits for the next read. A chat read of lone data lines goes out through
    ``_plain_chat`` up to the event that carries usage; a read of named events (messages,
    responses) sends its runs of text deltas as they came (``_named_read``)."""
    if call.fmt == "chat":
        plain = 0
        if read.raw is not None:
            plain, piece = _plain_chat(call, read.raw, len(read), leg.usage_injected, sent)
            if piece:
                pending.append(piece)
        for event in read if plain == 0 else read[plain:]:
            _relay_event(call, leg, event, tap, sent, pending)
    elif read.framed is not None:
        _named_read(call, leg, read, read.framed, tap, sent, pending)
    else:
        for event in read:
            _relay_event(call, leg, event, tap, sent, pending)


def _relay_event(call: TextCall, leg: Leg, event: SSEEvent, tap: UsageTap, sent: StreamedText,
                 pending: list[bytes]) -> None:
    """Add one upstream event to ``pending`` as the client gets it (or nothing, for the usage
    chunk only the gateway asked for)."""
    tap.observe(event)
    data, name = event.data, event.event
    sent.observe_raw(name, data)
    if name in FINAL_RESPONSE_EVENTS and call.fmt == "responses":
        # The final event as the usage tap decoded it (parsed once), else parsed here.
        decoded = tap.final_event if tap.final and tap.final_event else parse_upstream(data)
        _seen_response(call, leg, decoded.get("response") or {})
    elif name == "response.created" and call.fmt == "responses":
        call.created = data
    if leg.usage_injected:
        if b'"choices":[]' in data:  # the usage chunk only the gateway asked for
            return
        data = _USAGE_NULL.sub(b"", data)
    elif tap.final:
        data = _with_cost(call, tap, name, data)
    pending.append(frame(call.fmt, name, _rewrite_model(call, data)))


def _named_read(call: TextCall, leg: Leg, read: Read, framed: bytes, tap: UsageTap, sent: StreamedText,
                pending: list[bytes]) -> None:
    """A read of named events whose bytes are ``framed`` (``Read.framed``) into ``pending``: each
    run of events the relay sends unchanged (``text.as_is``: text deltas, and the events around them
    that carry no model, usage or response object) as the bytes it came in, every other event one
    by one (``_relay_event``). A run that names a model anyway (or, for a call that continued a
    stored response, a previous response) goes one by one too. An event name that is not ASCII
    leaves the rest of the read to go one by one (how many bytes it took is not known from the
    decoded name)."""
    as_is = as_is_names.BY_FORMAT[call.fmt]
    count = len(read)
    i = at = 0  # the event under way, and where it starts in ``framed``
    while i < count:
        event = read[i]
        name = event.event
        if name is None or not as_is[name]:
            _relay_event(call, leg, event, tap, sent, pending)
            i += 1
            if name is not None and not name.isascii():
                for event in read[i:]:
                    _relay_event(call, leg, event, tap, sent, pending)
                return
            at += len(event.data) + (8 if name is None else len(name) + 16)  # "event: ", "\ndata: ", "\n\n"
            continue
        first, start = i, at
        while True:
            at += len(event.data) + len(name) + 16
            i += 1
            if i == count:
                break
            event = read[i]
            name = event.event
            if name is None or not as_is[name]:
                break
        run = framed if start == 0 and at == len(framed) else framed[start:at]
        if b'"model":' in run or (call.previous_field and b'"previous_response_id":' in run):
            for event in read[first:i]:
                _relay_event(call, leg, event, tap, sent, pending)
        else:
            tap.final = False  # as observing the run's events would have left it
            sent.observe_read(run)
            pending.append(run)


# A chat event that needs a look of its own: the usage (the cost goes into it), and the usage
# chunk only the gateway asked for (left out).
_INJECTED_MARKS = (*CHAT_USAGE_MARKS, b'"choices":[]')


def _plain_chat(call: TextCall, raw: bytes, count: int, injected: bool, sent: StreamedText) -> tuple[int, bytes]:
    """The head of a read of lone chat ``data:`` lines as one piece for the client, without
    visiting its events one by one: the events before the first that carries usage (or, when the
    gateway asked for the usage itself, is the usage chunk), with the upstream's model name swapped
    for the platform's in one replacement. Returns how many events that was, and the piece.

    (0, b"") when the read's first event already needs a look of its own, or its model fields are
    not as many as its events, each naming the upstream's model: those events go one by one, and
    ``_rewrite_model`` rewrites each event's first one as it always does."""
    end = len(raw)
    for mark in _INJECTED_MARKS if injected else CHAT_USAGE_MARKS:
        at = raw.find(mark, 0, end)
        if at >= 0:
            end = raw.rfind(b"\n\ndata: ", 0, at) + 2  # where the event holding it starts (1: the first one)
    if end < 8:
        return 0, b""
    head = raw[:end] if end < len(raw) else raw
    seen = call.upstream_model_field
    if not seen:
        found = _MODEL_FIELD.search(head)
        if found is None:
            return 0, b""
        seen = call.upstream_model_field = found.group()
    # ``count``: the read's events, each ending in the read's only blank lines.
    events = count if head is raw else count - raw.count(b"\n\n", end)
    if head.count(b'"model":') != events:
        return 0, b""
    if injected:
        head = _USAGE_NULL.sub(b"", head)
    piece = head.replace(seen, call.model_field)
    # How many fields were replaced, from how much the piece grew (a name of the same length: counted).
    grown = len(call.model_field) - len(seen)
    if ((len(piece) - len(head)) // grown if grown else head.count(seen)) != events:
        return 0, b""
    sent.observe_read(head)
    return events, piece


def _seen_response(call: TextCall, leg: Leg, response: dict[str, Any]) -> None:
    """A responses stream ended with its final object, which is stored."""
    final = {**response, "model": call.model.model_id}
    if isinstance(final.get("usage"), dict):  # its own: the relayed event's usage gains the cost
        final["usage"] = dict(final["usage"])
    if call.previous_field:
        final["previous_response_id"] = call.body["previous_response_id"]
    stored.keep(call.principal, call.model.model_id, call.body, leg.ctx, final, call.context)


def _quote(call: TextCall, tap: UsageTap) -> float:
    ticket = call.record.ticket
    return ticket.quote_usd(tap.usage(), call.record.upstream_id) if ticket is not None else 0.0


def _with_cost(call: TextCall, tap: UsageTap, name: str | None, data: bytes) -> bytes:
    """The final usage event of a relayed stream (``data``, which ``tap`` has just observed and
    decoded), with the call's cost in its usage."""
    decoded = tap.final_event
    if not add_cost(call.fmt, name, decoded, _quote(call, tap)):
        return data
    return orjson.dumps(decoded)


async def stream(call: TextCall, failure: Failure | None = None) -> AsyncIterator[bytes]:
    """Client frames as they arrive, the format's terminator last. An error before the first frame
    propagates (the family's error answer), as does one after it without ``failure`` (the
    family's error event); with it, the stream ends in ``failure``'s frames for the error and
    the events sent before it (each ended by the only blank line it holds)."""
    def open_stream(up: UpstreamEntry) -> AsyncIterator[bytes]:
        return _relay(call, _leg(call, up))

    def chosen(up: UpstreamEntry) -> None:
        call.record.upstream_id = up.id

    record = call.record
    sent = SentEvents()
    try:
        async with contextlib.aclosing(routing.stream_with_failover(call.upstreams, open_stream, chosen)) as relayed:
            async for piece in relayed:
                record.first_chunk()
                if failure is not None:
                    sent.add(piece)
                yield piece
        if record.first_byte_ms is None:
            raise UpstreamError("the upstream ended the stream without sending any event")
    except GatewayError as exc:
        if record.first_byte_ms is not None:  # what it had used is recorded; a failed call costs nothing
            record.usage(*cut_usage(call.tap, call.sent_text, call.fmt, call.upstream_body))
        record.fail(exc)
        count = sent.count()
        if failure is None or not count:
            raise
        for piece in failure(exc, count):
            yield piece
        return
    except BaseException as exc:  # the client went away or the task was cancelled
        started = record.first_byte_ms is not None  # nothing sent, nothing charged
        record.usage(*(cut_usage(call.tap, call.sent_text, call.fmt, call.upstream_body) if started else (0, 0, 0)))
        record.fail(ClientClosedRequest(f"the client closed the stream ({type(exc).__name__})"))
        raise
    if TERMINATOR[call.fmt]:
        yield TERMINATOR[call.fmt]
    record.finish()
