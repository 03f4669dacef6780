"""Server-sent events: an incremental parser with no line-length limit, and a writer.

A 4K image arrives from Gemini as one ``data:`` line of 10-20 MB. The parser scans only the
bytes it has not looked at yet (no quadratic rescans), accepts LF, CRLF and CR line endings,
skips comment lines (proxies inject ``: keepalive``), and hands each event's data over as one
``bytes`` object so it is copied once.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

from studio.core import streams
from studio.core.memo import Memo


@dataclass(slots=True)
class SSEEvent:
    data: bytes
    event: str | None = None
    id: str | None = None


class Read(list[SSEEvent]):
    """The events one read of a stream completed, in order.

    ``raw``: the read's own bytes when they are exactly these events and nothing else, each a
    lone ``data: …`` line ended by a blank line (LF only): what a relay that changes nothing in
    them sends on as it is, and looks into with a few byte searches instead of visiting each
    event. None for any other read (named events, comments, ids, CRs, a part of an event).

    ``framed``: the same for a read whose events may also be named: each a lone ``data: …``
    line, or an ``event: …`` line and one ``data: …`` line, ended by a blank line (LF only), as
    the messages and responses formats write them. Where ``raw`` is set, ``framed`` is the same
    bytes; either way a blank line in them ends an event, and nothing else does.
    """

    __slots__ = ("framed", "raw")

    def __init__(self, events: list[SSEEvent] | tuple[SSEEvent, ...] = (), raw: bytes | None = None,
                 framed: bytes | None = None) -> None:
        super().__init__(events)
        self.raw = raw
        self.framed = raw if framed is None else framed

    def head(self, count: int) -> Read:
        """The first ``count`` events, with their bytes when this read has them."""
        raw, framed = self.raw, self.framed
        if count < len(self):
            if raw is not None:
                raw = framed = raw[:sum(len(event.data) for event in self[:count]) + 8 * count]  # "data: " and "\n\n"
            elif framed is not None:
                end = 0
                for _ in range(count):
                    end = framed.index(b"\n\n", end) + 2
                framed = framed[:end]
        return Read(self[:count], raw, framed)


# One event of the common kind: an optional ``event:`` line, one ``data:`` line, the blank line.
_PLAIN_EVENT = re.compile(rb"(?:event: ([^\n]*)\n)?data: ([^\n]*)\n\n")
# An event name's bytes → the name, decoded once a name (a stream repeats a few names).
_names: Memo[bytes, str] = Memo(lambda raw: raw.decode("utf-8", "replace"))


class SSEParser:
    """Feed it chunks; it returns the events completed by each chunk."""

    __slots__ = ("_buf", "_scan", "_data", "_event", "_id")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._scan = 0  # where the search for the next line end resumes
        self._data: list[bytes] = []
        self._event: str | None = None
        self._id: str | None = None

    def feed(self, chunk: bytes) -> Read:
        events = Read()
        if not self._buf and not self._data and self._event is None and b"\r" not in chunk:
            if chunk.startswith(b"data: ") and chunk.endswith(b"\n\n"):
                # Only lone data lines (a text stream's every read) when each newline is one of the
                # two that end an event: the payloads are then what lies between "data: " and them.
                payloads = chunk[6:-2].split(b"\n\ndata: ")
                if chunk.count(b"\n") == 2 * len(payloads):
                    key = self._id
                    return Read([SSEEvent(data, None, key) for data in payloads],
                                bytes(chunk) if type(chunk) is not bytes else chunk)
            if chunk.startswith(b"event: ") and chunk.endswith(b"\n\n"):
                named = self._named_events(chunk)
                if named is not None:
                    return named
            taken = self._plain_events(chunk, events)  # the common read: whole events, LF line ends
            if taken == len(chunk):
                if type(chunk) is bytes:
                    events.framed = chunk
                return events
            chunk = memoryview(chunk)[taken:]
        self._buf += chunk
        buf = self._buf
        start = 0
        # Remember where the next CR is, so a chunk of many LF-only lines is scanned once.
        cr = buf.find(b"\r", self._scan)
        while True:
            nl = buf.find(b"\n", self._scan)
            if 0 <= cr < self._scan:
                cr = buf.find(b"\r", self._scan)
            if nl < 0 and cr < 0:
                self._scan = len(buf)
                break
            if cr >= 0 and (nl < 0 or cr < nl):
                if cr == len(buf) - 1:
                    # A CR at the end may be the first half of CRLF; wait for the next byte.
                    self._scan = cr
                    break
                end, nxt = cr, cr + 2 if buf[cr + 1] == 0x0A else cr + 1
            else:
                end, nxt = nl, nl + 1
            self._line(buf, start, end, events)
            start = self._scan = nxt
        if start:
            del buf[:start]
            self._scan -= start
        return events

    def _named_events(self, chunk: bytes) -> Read | None:
        """The events of a read of named events only (a messages or responses stream's every
        read), each an ``event:`` line, one ``data:`` line and the blank line; None for any other.

        Cut at the starts of events, each piece is ``name\ndata: payload``. With exactly three
        newlines an event in the read, and each piece holding the one before its ``data:``, no
        name or payload holds another: the read is what it looks like. Byte searches do what
        the event pattern did a byte at a time (a third of the read's parse)."""
        pieces = chunk[7:-2].split(b"\n\nevent: ")
        if chunk.count(b"\n") != 3 * len(pieces):
            return None
        events = Read()
        names, key = _names, self._id
        for piece in pieces:
            name, sep, data = piece.partition(b"\ndata: ")
            if not sep:
                return None
            events.append(SSEEvent(data, names[name], key))
        if type(chunk) is bytes:
            events.framed = chunk
        return events

    def _plain_events(self, chunk: bytes, events: list[SSEEvent]) -> int:
        """Take the events at the head of ``chunk`` that are a lone ``data:`` line, or ``event:``
        then ``data:``, each ended by a blank line, in one step each; how many bytes they took.
        What follows them (another kind of event, a part of one) goes through the line parser."""
        at, end, match, key = 0, len(chunk), _PLAIN_EVENT.match, self._id
        while at < end:
            found = match(chunk, at)
            if found is None:
                break
            raw, data = found.groups()
            events.append(SSEEvent(data, None if raw is None else _names[raw], key))
            at = found.end()
        return at

    def _line(self, buf: bytearray, start: int, end: int, events: list[SSEEvent]) -> None:
        if start == end:
            if self._data:
                data = self._data[0] if len(self._data) == 1 else b"\n".join(self._data)
                events.append(SSEEvent(data=data, event=self._event, id=self._id))
            self._data, self._event = [], None
            return
        if buf[start] == 0x3A:  # ":" comment / keep-alive
            return
        colon = buf.find(b":", start, end)
        if colon < 0:
            name, value_start = bytes(buf[start:end]), end
        else:
            name = bytes(buf[start:colon])
            value_start = colon + 1
            if value_start < end and buf[value_start] == 0x20:
                value_start += 1
        if name == b"data":
            self._data.append(bytes(buf[value_start:end]))
        elif name == b"event":
            self._event = buf[value_start:end].decode("utf-8", "replace")
        elif name == b"id":
            self._id = buf[value_start:end].decode("utf-8", "replace")

    def close(self) -> Read:
        """Flush an event the stream ended without a blank line after."""
        events = Read()
        if self._buf:
            self._line(self._buf, 0, len(self._buf), events)
            self._buf.clear()
            self._scan = 0
        self._line(self._buf, 0, 0, events)
        return events


async def iter_sse_reads(chunks: AsyncIterable[bytes]) -> AsyncIterator[Read]:
    """The events each read completed, as one list per read that completed any (a relay sends
    them on together, and handles a read's events in one step rather than one by one).

    Closing it (``contextlib.aclosing``) closes ``chunks`` too when that is an async generator
    (``httpx.Response.aiter_raw``): a reader that stops at an end marker leaves nothing for the
    garbage collector to close with a task of its own."""
    parser = SSEParser()
    reads = aiter(chunks)
    try:
        async for chunk in reads:
            events = parser.feed(chunk)
            if events:
                yield events
        events = parser.close()
        if events:
            yield events
    finally:
        await streams.close(reads)


async def iter_sse(chunks: AsyncIterable[bytes]) -> AsyncIterator[SSEEvent]:
    """The events one by one; closing it closes ``chunks`` as ``iter_sse_reads`` does."""
    async with contextlib.aclosing(iter_sse_reads(chunks)) as reads:
        async for events in reads:
            for event in events:
                yield event


def format_event(data: bytes, event: str | None = None) -> bytes:
    """One SSE frame. ``data`` must not contain newlines (compact JSON never does)."""
    if event is None:
        return b"data: " + data + b"\n\n"
    return b"event: " + event.encode() + b"\ndata: " + data + b"\n\n"
