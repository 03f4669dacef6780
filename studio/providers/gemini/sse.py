"""The ``alt=sse`` stream of the Gemini protocol, read without copying big frames.

Each event is one ``data:`` line holding a whole response JSON; a 4K image makes that line
10-20 MB. The generic parser (``sse.py``) hands events over as fresh ``bytes``, which holds the
line twice at the moment of the copy. This reader grows one ``bytearray`` per event and, when
the event ends, hands over that very buffer (its ``data: `` prefix cut off in place), so a big
frame exists once. Lines may end in LF, CRLF or CR; comment lines (``: keepalive``) and other
fields are skipped; there is no line-length limit.

A reader that may open frames (``passing``) does not build a long line at all: once a ``data``
line has grown to ``OPEN_AT`` inside one of its strings, it hands on the line so far as the head of an
open frame (``studio.core.open_frames``), then each chunk of the string as it comes, then the
frame's tail with the event's end, as a byte relay would.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator

from studio.core.errors import UpstreamError
from studio.core.open_frames import FrameHead, FramePart, FrameTail, StringPiece

_DATA = b"data"
# An open string shorter than this when its line reaches ``OPEN_AT`` is not the frame's big one.
_BIG_STRING = 64 * 1024


class FrameReader:
    """Feed it chunks; it returns the ``data`` of each event completed by the chunk."""

    __slots__ = ("_buf", "_scan", "_line_start", "_data", "_held", "_held_size", "_long",
                 "_passing", "_in_string", "_slashes", "_tail_line", "_tail_event", "_whole_line")

    # How a long line (a 4K picture's 10-20 MB frame, in 64 KB chunks) grows into its buffer:
    # - Alone in the process, each chunk is appended as it comes: the allocator extends the
    #   buffer where it is, so the frame is held once (joining held chunks at the end held it
    #   twice at that moment: 2.1 times the frame at the peak, against 1.5).
    # - With other long lines growing beside it, appended chunk by chunk, the buffer was moved
    #   (copied whole) at about every eighth of its growth: 28 ms of copying per 15 MB frame with
    #   16 streams at once, 4 ms to read it otherwise. So its chunks are held apart until they
    #   come to half of what the buffer holds (``HOLD`` at least), then appended together: the
    #   buffer grows in a few large steps, moved a few times at most.
    HOLD = 1 << 20
    # A passing reader opens a line this long (a picture of a few hundred KB on): the client gets
    # its bytes as they come, and none of it is gathered in a buffer first.
    OPEN_AT = 256 * 1024
    SHARE = 2
    long_lines = 0  # readers of this process inside a long line now (its heap is what is shared)

    def __init__(self, *, passing: bool = False) -> None:
        self._passing = passing
        self._in_string = False  # an open frame's big string is arriving
        self._slashes = 0  # backslashes at the end of the string's last piece
        self._tail_line = False  # the next line to end is an open frame's tail (no ``data:``)
        self._tail_event = False  # the next event is an open frame's tail
        self._whole_line = False  # this long line could not be opened: it is read whole
        self._buf = bytearray()
        self._held: list[bytes] = []  # chunks without a line end, after ``_buf``
        self._held_size = 0
        self._long = False
        self._scan = 0  # where the search for the next line end resumes
        self._line_start = 0
        # (start, end) of the current event's data lines inside ``_buf``.
        self._data: list[tuple[int, int]] = []

    def feed(self, chunk: bytes) -> list[bytearray | FramePart]:
        if self._in_string:
            return self._string_piece(chunk)
        if self._scan == len(self._buf) and b"\n" not in chunk and b"\r" not in chunk:
            # Still inside a line: nothing to scan again later.
            if self._passing and not self._tail_line and not self._whole_line:
                self._buf += chunk
                self._scan = len(self._buf)
                if len(self._buf) - self._line_start >= self.OPEN_AT:
                    return self._open()
                return []
            if not self._long and len(self._buf) + self._held_size >= self.HOLD:
                self._long = True
                FrameReader.long_lines += 1
            if FrameReader.long_lines > 1:
                self._held.append(chunk)
                self._held_size += len(chunk)
                if self._held_size >= self.HOLD and self._held_size * self.SHARE >= len(self._buf):
                    self._take_held()
            else:
                self._take_held()
                self._buf += chunk
                self._scan = len(self._buf)
            return []
        self._take_held()
        self.release()  # the long line ends in this chunk
        self._whole_line = False
        self._buf += chunk
        events: list[bytearray | FramePart] = []
        while True:
            line_end, next_line = self._next_line_end()
            if line_end < 0:
                break
            event = self._line(self._line_start, line_end, next_line)
            if event is not None:
                events.append(event)
            else:
                self._line_start = self._scan = next_line
        self._compact()
        return events

    def release(self) -> None:
        """No longer inside a long line (its end came, or the stream is given up)."""
        if self._long:
            self._long = False
            FrameReader.long_lines -= 1

    @property
    def in_string(self) -> bool:
        """Inside an open frame's big string: a stream that ends here has cut its frame short."""
        return self._in_string

    def _open(self) -> list[bytearray | FramePart]:
        """The line so far as an open frame's head and its big string's first piece, if the line
        is the event's one ``data`` line and ends inside a long string; else it is read whole."""
        buf, start = self._buf, self._line_start
        colon = buf.find(b":", start, start + 8)
        opening = _open_string(buf, colon + 1) if colon >= 0 and buf[start:colon] == _DATA else -1
        if self._data or opening < 0 or len(buf) - opening - 1 < _BIG_STRING:
            self._whole_line = True
            return []
        value = colon + 2 if buf[colon + 1] == 0x20 else colon + 1
        head = FrameHead(bytes(buf[value:opening + 1]))
        piece = bytes(buf[opening + 1:])
        self._buf = bytearray()
        self._scan = self._line_start = 0
        self._in_string = True
        self._slashes = _trailing_slashes(piece, 0)
        return [head, StringPiece(piece)]

    def _string_piece(self, chunk: bytes) -> list[bytearray | FramePart]:
        """A chunk of the open string: handed on up to its closing quote; after that, the frame's
        tail is read as a line of its own."""
        closing = _closing_quote(chunk, self._slashes)
        if closing < 0:
            self._slashes = _trailing_slashes(chunk, self._slashes)
            return [StringPiece(chunk)]
        self._in_string = False
        self._tail_line = self._tail_event = True
        parts: list[bytearray | FramePart] = [StringPiece(chunk[:closing])] if closing else []
        return parts + self.feed(chunk[closing:])

    def close(self) -> list[bytearray | FramePart]:
        """The stream ended: flush a last line and event that had no blank line after them."""
        if self._in_string:
            return []
        self._take_held()
        self.release()
        buf = self._buf
        if self._line_start < len(buf):
            end = len(buf) - 1 if buf.endswith(b"\r") else len(buf)
            event = self._line(self._line_start, end, len(buf))
            if event is not None:
                return [event]
        if self._data:
            return [self._take_event(len(self._buf))]
        return []

    def _take_held(self) -> None:
        """Append the held chunks to the buffer (each freed once appended); they hold no line
        end, so the scan resumes after them."""
        held = self._held
        if not held:
            return
        held.reverse()
        buf = self._buf
        while held:
            buf += held.pop()
        self._held_size = 0
        self._scan = len(buf)

    def _next_line_end(self) -> tuple[int, int]:
        buf, scan = self._buf, self._scan
        nl = buf.find(b"\n", scan)
        cr = buf.find(b"\r", scan, nl if nl >= 0 else len(buf))
        if cr >= 0:
            if cr == len(buf) - 1:
                self._scan = cr  # maybe the first half of CRLF: wait for the next byte
                return -1, -1
            return cr, cr + 2 if buf[cr + 1] == 0x0A else cr + 1
        if nl >= 0:
            return nl, nl + 1
        self._scan = len(buf)
        return -1, -1

    def _line(self, start: int, end: int, next_line: int) -> bytearray | FramePart | None:
        buf = self._buf
        if self._tail_line:  # all of it is data (its ``data:`` went with the head)
            self._tail_line = False
            self._data.append((start, end))
            return None
        if start == end:  # blank line: dispatch
            if self._data:
                return self._take_event(next_line)
            return None
        if buf[start] == 0x3A:  # ":" comment / keep-alive
            return None
        colon = buf.find(b":", start, end)
        name_end = colon if colon >= 0 else end
        if buf[start:name_end] == _DATA:
            value = min(colon + 1, end) if colon >= 0 else end
            if value < end and buf[value] == 0x20:
                value += 1
            self._data.append((value, end))
        return None

    def _take_event(self, rest_start: int) -> bytearray | FramePart:
        """Hand over the event's data (an open frame's tail, if it is that); what follows it starts
        a new buffer."""
        buf, lines = self._buf, self._data
        rest = bytearray(buf[rest_start:])  # a chunk's tail at most
        if len(lines) == 1:
            start, end = lines[0]
            data = buf
            del data[end:]  # shrinking in place: no copy
            del data[:start]  # CPython moves the start pointer: no copy
        else:
            data = bytearray(b"\n".join(bytes(buf[s:e]) for s, e in lines))
        self._buf = rest
        self._scan = self._line_start = 0
        self._data = []
        if self._tail_event:
            self._tail_event = False
            return FrameTail(data)
        return data

    def _compact(self) -> None:
        """Drop consumed lines unless an event's data still lives in the buffer."""
        if self._data or not self._line_start:
            return
        del self._buf[:self._line_start]
        self._scan -= self._line_start
        self._line_start = 0


def _open_string(buf: bytearray, start: int) -> int:
    """Where the string the buffer ends inside opens (its quote), or -1 if it ends outside one."""
    opening = buf.find(b'"', start)
    while opening >= 0:
        closing = _closing_quote(buf, 0, opening + 1)
        if closing < 0:
            return opening
        opening = buf.find(b'"', closing + 1)
    return -1


def _closing_quote(data: bytes | bytearray, slashes: int, start: int = 0) -> int:
    """The first unescaped ``"`` from ``start``; ``slashes``: backslashes just before ``data``."""
    find = data.find
    pos = start
    while True:
        quote = find(b'"', pos)
        if quote < 0:
            return -1
        run = 0
        while quote - 1 - run >= start and data[quote - 1 - run] == 0x5C:
            run += 1
        if quote - run == start:
            run += slashes
        if run % 2 == 0:
            return quote
        pos = quote + 1


def _trailing_slashes(data: bytes, before: int) -> int:
    """Backslashes at the end of ``data`` (``before``: those before it, if it is all backslashes)."""
    run, last = 0, len(data) - 1
    while run <= last and data[last - run] == 0x5C:
        run += 1
    return run + before if run == len(data) else run


async def iter_frames(chunks: AsyncIterable[bytes], *, passing: bool = False) -> AsyncIterator[bytearray | FramePart]:
    """The ``data`` of each event; with ``passing``, a big frame opened (``FrameReader``)."""
    reader = FrameReader(passing=passing)
    try:
        async for chunk in chunks:
            for frame in reader.feed(chunk):
                yield frame
        for frame in reader.close():
            yield frame
        if reader.in_string:
            raise UpstreamError("the upstream's stream ended inside an answer frame", details={"upstream_status": 200})
    finally:  # a stream cut or given up partway is no longer growing a line
        reader.release()
