"""Writing SSE responses: commit to a 200 only once the first event is in hand."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from django.http import HttpRequest, StreamingHttpResponse

from api.body import start_response
from api.errors import family_for
from studio.core import streams
from studio.core.errors import GatewayError

logger = logging.getLogger(__name__)

BIG_FRAME = 64 * 1024


def data_frame(payload: bytes) -> list[bytes]:
    """``data: <payload>`` as pieces; a multi-megabyte payload is not copied to add the prefix."""
    if len(payload) >= BIG_FRAME:
        return [b"data: ", payload, b"\n\n"]
    return [b"data: " + payload + b"\n\n"]


def named_frame(event: str, payload: bytes) -> list[bytes]:
    head = b"event: " + event.encode() + b"\ndata: "
    if len(payload) >= BIG_FRAME:
        return [head, payload, b"\n\n"]
    return [head + payload + b"\n\n"]


def ready_frame(frame: bytes) -> list[bytes]:
    """An event the engine already framed (text formats frame their own events)."""
    return [frame]


def named_error_frame(payload: bytes) -> list[bytes]:
    """``event: error`` with the family's error body (the messages format's mid-stream error)."""
    return named_frame("error", payload)


async def start_stream(
    request: HttpRequest,
    events: AsyncIterator[Any],
    frame: Callable[[Any], Sequence[bytes | memoryview]] = data_frame,
    error_frame: Callable[[bytes], Sequence[bytes | memoryview]] = data_frame,
) -> EventStream:
    """Await the first event (errors before it become a normal error response), then stream.

    An error after the first event can no longer change the status: it is sent as the
    route family's error event and the stream ends (or, if ``error_frame`` raises
    ``studio.core.streams.Cut``, the answer is cut off).
    """
    first = await anext(events)

    async def body() -> AsyncIterator[bytes]:
        try:
            for piece in frame(first):
                yield piece
            try:
                async for event in events:
                    for piece in frame(event):
                        yield piece
            except GatewayError as exc:
                logger.info("stream on %s ended by %r", request.path, exc)
                for piece in error_frame(family_for(request).body_bytes(exc)):
                    yield piece
        finally:
            await streams.close(events)  # left early: the events' source settles what it sent now

    return EventStream(body())


class EventStream(StreamingHttpResponse):
    """``StreamingHttpResponse(events, content_type="text/event-stream")`` with ``Cache-Control:
    no-cache`` and ``X-Accel-Buffering: no``, made directly, as ``api.body.JsonAnswer`` is: the
    general constructor and header setter look each header up in the new store and check its
    name and value for their charset, for three constants (``tests/api/test_sse.py`` compares
    the two)."""

    def __init__(self, events: AsyncIterator[bytes]) -> None:
        start_response(self, _STREAM_HEADERS)
        self._iterator, self.is_async = events, True  # what the ``streaming_content`` setter makes of it


_STREAM_HEADERS = {name.lower(): (name, value) for name, value in (
    ("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no"))}
