"""The engine for native image generation: route, call with failover, record.

Used by the /v1 native routes and by the studio's Generate page alike. The body travels as
the client sent it (unknown fields survive); only the model name changes, and it lives in the
upstream's path, not the body.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from studio.core.entries import ModelEntry, UpstreamEntry
from studio.core.errors import GatewayError
from studio.core.open_frames import FrameHead, FramePart, FrameTail, StringPiece
from studio.core.principal import Principal
from studio.gateway import admission, image_tokens, recording, routing, snapshot
from studio.gateway.auth import resolve_model
from studio.gateway.cost import Usage
from studio.gateway.native import rules as native_rules
from studio.gateway.native.frames import PassedFrame, PassedString
from studio.gateway.native.record import NativeRecord, billed, final_usage_at, usage_in, with_cost
from studio.gateway.native.version import name_platform_model
from studio.gateway.text_checks import refuse_nul
from studio.providers.contracts import Capability
from studio.providers.registry import capable, native_upstream

ROUTE = "native"


@dataclass(slots=True)
class NativeCall:
    """One prepared call: the model, the upstreams to try, the body, the record being built."""

    model: ModelEntry
    upstreams: list[UpstreamEntry]
    body: dict[str, Any]
    encoded: bytes  # what goes upstream: the client's own bytes when we have them
    record: NativeRecord
    started: float = field(default_factory=time.perf_counter)


async def prepare(
    principal: Principal, model_id: str, body: Any, *, stream: bool, route: str = ROUTE, raw: bytes | None = None,
) -> NativeCall:
    """Check the model, the key's allowance, its upstreams' capability and the body; no network,
    no database.

    ``raw`` is the body exactly as the client sent it: forwarded as is, so unknown fields,
    key order and number spellings survive (the model lives in the upstream path).
    """
    snap = await snapshot.get()
    model = resolve_model(snap, principal, model_id, route)
    native_rules.validate(body, model)
    refuse_nul(body, raw)
    upstreams = capable(routing.candidates(snap, model_id), model, Capability.NATIVE_IMAGE)
    record = NativeRecord.start(principal, model_id, route, body, stream=stream)
    likely = estimate(body, len(raw) if raw is not None else 0)
    # The vendor bills the image as output tokens: they count against a tokens-per-minute limit
    # like a chat's, reserved before the call (once an upstream can make it) and settled with what
    # it reports.
    record.ticket = await admission.admit(principal, model, likely, tokens=likely.input_tokens + likely.output_tokens,
                                          images=1, snap=snap)
    return NativeCall(model=model, upstreams=upstreams, body=body,
                      encoded=raw if raw is not None else orjson.dumps(body), record=record)


# Output tokens of one image by ``imageConfig.imageSize`` (the vendor bills images as tokens).
def estimate(body: Any, size: int) -> Usage:
    """What a native call will likely use: its prompt bytes as tokens, and one image."""
    config = body.get("generationConfig") if isinstance(body, dict) else None
    image = config.get("imageConfig") if isinstance(config, dict) else None
    image_size = str(image.get("imageSize") or "") if isinstance(image, dict) else ""
    return Usage(input_tokens=image_tokens.prompt_tokens(size), output_tokens=image_tokens.native_image(image_size))


async def generate(call: NativeCall) -> bytes | bytearray:
    """Buffered generateContent with failover; returns the upstream's bytes unchanged."""
    async def attempt(up: UpstreamEntry) -> bytes | bytearray:
        provider = native_upstream(up, call.model)
        return await provider.generate_content(up.upstream_model(call.model.model_id), call.encoded)

    try:
        upstream, body = await routing.with_failover(call.upstreams, attempt)
    except GatewayError as exc:
        call.record.fail(exc)
        raise
    call.record.upstream_id = upstream.id
    call.record.first_chunk()
    body = name_platform_model(body, call.model.model_id)
    call.record.add_frame(body)
    _finish(call.record)
    await recording.room()
    return body


async def stream(call: NativeCall, *, passing: bool = False) -> AsyncIterator[bytes | bytearray | FramePart]:
    """streamGenerateContent with failover before the first frame; yields each frame's JSON.

    A frame may be a ``bytearray`` (a big one is handed on in the buffer it was read into). With
    ``passing`` (a relay to the client), a big frame may come as the parts of an open frame
    (``studio.core.open_frames``), each handed on as it comes: its model name and cost are set in
    its tail. One whose head holds them (no vendor puts them before the picture) is joined and
    handed on whole.
    """
    def open_stream(up: UpstreamEntry) -> AsyncIterator[bytes | bytearray | FramePart]:
        provider = native_upstream(up, call.model)
        return provider.stream_generate_content(up.upstream_model(call.model.model_id), call.encoded, passing=passing)

    def chosen(up: UpstreamEntry) -> None:
        call.record.upstream_id = up.id

    record = call.record
    opened: _Opening | None = None
    try:
        async with contextlib.aclosing(routing.stream_with_failover(call.upstreams, open_stream, chosen)) as relayed:
            async for item in relayed:
                record.first_chunk()
                kind = type(item)
                if kind is StringPiece:
                    assert opened is not None
                    opened.pieces.append(item.data)
                    if opened.relayed:
                        yield item
                    continue
                if kind is FrameHead:
                    opened = _Opening(item.data, relayed=_settled_later(item.data))
                    if opened.relayed:
                        yield item
                    continue
                if kind is FrameTail:
                    assert opened is not None
                    string = PassedString(tuple(opened.pieces))
                    if opened.relayed:
                        tail = _finished(call, item.data)
                        record.add_frame(PassedFrame(opened.head, string, tail))
                        yield FrameTail(tail)
                    else:
                        frame = _finished(call, PassedFrame(opened.head, string, item.data).joined())
                        record.add_frame(frame)
                        yield frame
                    opened = None
                    continue
                frame = _finished(call, item)
                record.add_frame(frame)
                yield frame
    except GatewayError as exc:
        record.fail(exc)
        raise
    except BaseException as exc:  # client went away or the task was cancelled
        record.fail(GatewayError(f"stream interrupted: {type(exc).__name__}"))
        raise
    _finish(record)
    await recording.room()


def _finish(record: NativeRecord) -> None:
    """Hand the record over: failed, when its usage holds a count that is none (the stream's
    final frame checks its own as it passes; one of an earlier frame may be the one kept)."""
    try:
        record.check_usage()
    except GatewayError as exc:
        record.fail(exc)
        raise
    record.finish()


@dataclass(slots=True)
class _Opening:
    """An open frame on its way: relayed part by part, or held until its end."""

    head: bytes
    relayed: bool
    pieces: list[bytes] = field(default_factory=list)


def _settled_later(head: bytes) -> bool:
    """Whether what this gateway changes in a frame (its model's name, its usage) is after its
    big string, in its tail: then the frame can be relayed as it comes."""
    return b'"modelVersion"' not in head and b'"usageMetadata"' not in head and b'"finishReason"' not in head


def _finished(call: NativeCall, frame: bytes | bytearray) -> bytes | bytearray:
    """The frame (or an open frame's tail) as the client gets it: the platform's model name, and
    the call's cost in the final frame's usage."""
    frame = name_platform_model(frame, call.model.model_id)
    ticket = call.record.ticket
    if ticket is not None and (at := final_usage_at(frame)) is not None:
        # The final frame carries the call's cost (``costUsd``, US dollars) in its usage, as a
        # buffered answer's header does: the format lets usageMetadata grow fields (spec:
        # "other fields may appear") and the official SDK ignores the ones it does not know.
        quote = ticket.quote(billed(usage_in(frame)), call.record.upstream_id)
        frame = with_cost(frame, at, quote)
    return frame


async def count_tokens(principal: Principal, model_id: str, body: Any, raw: bytes) -> bytes:
    """``countTokens``: the vendor counts (it knows its tokenizer); nothing is generated or charged."""
    native_rules.validate_count(body)
    inner = body.get("generateContentRequest")
    snap = await snapshot.get()
    model = resolve_model(snap, principal, model_id, ROUTE, use="countTokens")
    refuse_nul(body, raw)
    upstreams = capable(routing.candidates(snap, model_id), model, Capability.NATIVE_IMAGE)

    async def attempt(up: UpstreamEntry) -> bytes:
        upstream_model = up.upstream_model(model_id)
        sent = raw
        if isinstance(inner, dict) and "model" in inner:  # the vendor wants its own name there
            sent = orjson.dumps({**body, "generateContentRequest": {**inner, "model": f"models/{upstream_model}"}})
        return await native_upstream(up, model).count_tokens(upstream_model, sent)

    _upstream, answer = await routing.with_failover(upstreams, attempt)
    return answer
