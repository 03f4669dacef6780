"""The engine for native image generation: route, call with failover, record.

Used by the /v1 native routes and by the studio's Generate page alike. The body travels as
the client sent it (unknown fields survive); only the model name changes, and it lives in the
upstream's path, not the body.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from studio.providers.registry import provider_for

from . import native_rules, recording, routing, snapshot
from .errors import GatewayError
from .native_record import NativeRecord
from .principal import Principal, resolve_model
from .snapshot import ModelEntry, UpstreamEntry

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
    """Check the model, the key's allowance and the body; no network, no database.

    ``raw`` is the body exactly as the client sent it: forwarded as is, so unknown fields,
    key order and number spellings survive (the model lives in the upstream path).
    """
    snap = await snapshot.get()
    model = resolve_model(snap, principal, model_id, route)
    native_rules.validate(body, model)
    record = NativeRecord.start(principal, model_id, route, body, stream=stream)
    return NativeCall(model=model, upstreams=routing.candidates(snap, model_id), body=body,
                      encoded=raw if raw is not None else orjson.dumps(body), record=record)


async def generate(call: NativeCall) -> bytes | bytearray:
    """Buffered generateContent with failover; returns the upstream's bytes unchanged."""
    async def attempt(up: UpstreamEntry) -> bytes | bytearray:
        provider = provider_for(up, call.model)
        return await provider.generate_content(up.upstream_model(call.model.model_id), call.encoded)

    try:
        upstream, body = await routing.with_failover(call.upstreams, attempt)
    except GatewayError as exc:
        call.record.fail(exc)
        raise
    call.record.upstream_id = upstream.id
    call.record.first_chunk()
    call.record.add_frame(body)
    call.record.finish()
    await recording.room()
    return body


async def stream(call: NativeCall) -> AsyncIterator[bytes | bytearray]:
    """streamGenerateContent with failover before the first frame; yields each frame's JSON.

    A frame may be a ``bytearray`` (a big one is handed on in the buffer it was read into).
    """
    def open_stream(up: UpstreamEntry) -> AsyncIterator[bytes | bytearray]:
        provider = provider_for(up, call.model)
        return provider.stream_generate_content(up.upstream_model(call.model.model_id), call.encoded)

    def chosen(up: UpstreamEntry) -> None:
        call.record.upstream_id = up.id

    try:
        async for frame in routing.stream_with_failover(call.upstreams, open_stream, chosen):
            if not call.record.frames:
                call.record.first_chunk()
            call.record.add_frame(frame)
            yield frame
    except GatewayError as exc:
        call.record.fail(exc)
        raise
    except BaseException as exc:  # client went away or the task was cancelled
        call.record.fail(GatewayError(f"stream interrupted: {type(exc).__name__}"))
        raise
    call.record.finish()
    await recording.room()
