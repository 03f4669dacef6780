"""The text engine: chat completions, messages and responses, buffered and streamed.

One code path for every format: check the request, pick upstreams, and per upstream either pass
the body through (the upstream speaks the client's format: only ``model`` is rewritten, unknown
fields survive, the answer's bytes are relayed with the model name swapped back) or translate
through the pair modules. Streams are relayed frame by frame as they arrive, with failover only
before the first frame. Usage is read from the upstream's own counts and recorded off the
response path.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import orjson

from studio.providers.registry import provider_for

from . import routing, snapshot, text_translation, text_validation
from .errors import BadRequest, GatewayError, NotFound, UpstreamError
from .principal import Principal, resolve_model
from .snapshot import ModelEntry, Snapshot, UpstreamEntry
from .text_record import TextRecord
from .text_translation import Context, Translator
from .text_usage import UsageTap, from_body

# Each client format: the path it is served on (for messages) and how its stream is framed.
PATHS = {"chat": "/v1/chat/completions", "messages": "/v1/messages", "responses": "/v1/responses"}
NAMED_EVENTS = {"chat": False, "messages": True, "responses": True}
TERMINATOR = {"chat": b"data: [DONE]\n\n", "messages": b"", "responses": b""}
DEFAULT_MAX_TOKENS = 4096

_MODEL_FIELD = re.compile(rb'"model":\s?"(?:[^"\\]|\\.)*"')
_USAGE_NULL = re.compile(rb',"usage":null|"usage":null,')


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


@dataclass(slots=True)
class Leg:
    """How one upstream is called: in which format, with which body, through which translator."""

    provider: Any
    target: str
    translator: Translator | None
    body: bytes
    ctx: Context
    usage_injected: bool = False


def parse(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"the request body is not valid JSON: {exc}", param="body") from exc


def _resolve(snap: Snapshot, principal: Principal, model_id: str, fmt: str) -> ModelEntry:
    try:
        return resolve_model(snap, principal, model_id, fmt)
    except NotFound:
        known = snap.models.get(model_id)
        if known is None:
            raise BadRequest(f"the model '{model_id}' does not exist", param="model", code="model_not_found") from None
        raise BadRequest(f"the model '{model_id}' is a {known.kind} model; it cannot be used on {PATHS[fmt]}",
                         param="model", code="model_not_supported") from None


def wants_usage(fmt: str, body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return fmt != "chat" or (isinstance(options, dict) and options.get("include_usage") is True)


async def prepare(principal: Principal, fmt: str, raw: bytes) -> TextCall:
    """Check the body, the model and the key's allowance; no network, no database."""
    body = text_validation.validate(fmt, parse(raw))
    snap = await snapshot.get()
    model = _resolve(snap, principal, body["model"], fmt)
    stream = body.get("stream") is True
    ctx = Context(model=model.model_id, upstream_model="", stream=stream, include_usage=wants_usage(fmt, body),
                  default_max_tokens=int(model.capabilities.get("default_max_tokens") or DEFAULT_MAX_TOKENS),
                  request=body)
    return TextCall(fmt=fmt, model=model, upstreams=routing.candidates(snap, model.model_id), body=body,
                    stream=stream, record=TextRecord(principal, model.model_id, fmt, stream), ctx=ctx,
                    model_field=b'"model":' + orjson.dumps(model.model_id))


def _leg(call: TextCall, upstream: UpstreamEntry) -> Leg:
    provider = provider_for(upstream, call.model)
    formats = tuple(call.model.capabilities.get("upstream_formats") or getattr(provider, "text_formats", ()))
    target, translator = text_translation.plan(call.fmt, formats)
    ctx = dataclasses.replace(call.ctx, upstream_model=upstream.upstream_model(call.model.model_id))
    if translator is not None:
        return Leg(provider, target, translator, orjson.dumps(translator.request(call.body, ctx)), ctx)
    body = {**call.body, "model": ctx.upstream_model}
    injected = call.stream and call.fmt == "chat" and not ctx.include_usage
    if injected:
        # Ask for the usage chunk the client did not ask for; the relay removes it again.
        options = body.get("stream_options") if isinstance(body.get("stream_options"), dict) else {}
        body["stream_options"] = {**options, "include_usage": True}
    return Leg(provider, target, None, orjson.dumps(body), ctx, usage_injected=injected)


def _rewrite_model(call: TextCall, data: bytes) -> bytes:
    return _MODEL_FIELD.sub(lambda _: call.model_field, data, count=1)


async def complete(call: TextCall) -> bytes:
    """A buffered call with failover; answers in the client's format."""
    async def attempt(up: UpstreamEntry) -> tuple[Leg, bytes]:
        leg = _leg(call, up)
        return leg, await leg.provider.text_request(leg.target, leg.body)

    record = call.record
    try:
        upstream, (leg, raw) = await routing.with_failover(call.upstreams, attempt)
        record.upstream_id = upstream.id
        record.first_chunk()
        answer = parse_upstream(raw)
        record.usage(*from_body(leg.target, answer))
        if leg.translator is None:
            out = _rewrite_model(call, raw)
        else:
            out = orjson.dumps(leg.translator.response(answer, leg.ctx))
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
    tap = UsageTap(leg.target)
    events = leg.provider.text_stream(leg.target, leg.body)
    try:
        if leg.translator is None:
            async for event in events:
                tap.observe(event)
                data = event.data
                if leg.usage_injected:
                    if b'"choices":[]' in data:
                        continue  # the usage chunk only the gateway asked for
                    data = _USAGE_NULL.sub(b"", data)
                yield frame(call.fmt, event.event, _rewrite_model(call, data))
        else:
            async def decoded() -> AsyncIterator[tuple[str | None, dict[str, Any]]]:
                async for event in events:
                    tap.observe(event)
                    try:
                        yield event.event, orjson.loads(event.data)
                    except orjson.JSONDecodeError:
                        continue  # keep-alive noise; the vendors send JSON only
            async for name, data in leg.translator.stream(decoded(), leg.ctx):
                yield frame(call.fmt, name, orjson.dumps(data))
    finally:
        call.record.usage(tap.input_tokens, tap.output_tokens)


async def stream(call: TextCall) -> AsyncIterator[bytes]:
    """Client frames as they arrive, the format's terminator last; errors after the first
    frame propagate to the caller, which renders the family's error event."""
    def open_stream(up: UpstreamEntry) -> AsyncIterator[bytes]:
        return _relay(call, _leg(call, up))

    def chosen(up: UpstreamEntry) -> None:
        call.record.upstream_id = up.id

    record = call.record
    try:
        async for piece in routing.stream_with_failover(call.upstreams, open_stream, chosen):
            record.first_chunk()
            yield piece
        if record.first_byte_ms is None:
            raise UpstreamError("the upstream ended the stream without sending any event")
    except GatewayError as exc:
        record.fail(exc)
        raise
    except BaseException as exc:  # the client went away or the task was cancelled
        record.fail(GatewayError(f"stream interrupted: {type(exc).__name__}", status=499))
        raise
    if TERMINATOR[call.fmt]:
        yield TERMINATOR[call.fmt]
    record.finish()
