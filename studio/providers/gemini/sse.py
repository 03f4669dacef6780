"""The ``alt=sse`` stream of the Gemini protocol, read without copying big frames.

Each event is one ``data:`` line holding a whole response JSON; a 4K image makes that line
10-20 MB. The generic parser (``sse.py``) hands events over as fresh ``bytes``, which holds the
line twice at the moment of the copy. This reader grows one ``bytearray`` per event and, when
the event ends, hands over that very buffer (its ``data: `` prefix cut off in place), so a big
frame exists once. Lines may end in LF, CRLF or CR; comment lines (``: keepalive``) and other
fields are skipped; there is no line-length limit.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator

_DATA = b"data"


class FrameReader:
    """Feed it chunks; it returns the ``data`` of each event completed by the chunk."""

    __slots__ = ("_buf", "_scan", "_line_start", "_data", "_held", "_held_size", "_long")

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
    SHARE = 2
    long_lines = 0  # readers of this process inside a long line now (its heap is what is shared)

    def __init__(self) -> None:
        self._buf = bytearray()
        self._held: list[bytes] = []  # chunks without a line end, after ``_buf``
        self._held_size = 0
        self._long = False
        self._scan = 0  # where the search for the next line end resumes
        self._line_start = 0
        # (start, end) of the current event's data lines inside ``_buf``.
        self._data: list[tuple[int, int]] = []

    def feed(self, chunk: bytes) -> list[bytearray]:
        if self._scan == len(self._buf) and b"\n" not in chunk and b"\r" not in chunk:
            # Still inside a line: nothing to scan again later.
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
        self._buf += chunk
        events: list[bytearray] = []
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

    def close(self) -> list[bytearray]:
        """The stream ended: flush a last line and event that had no blank line after them."""
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

    def _line(self, start: int, end: int, next_line: int) -> bytearray | None:
        buf = self._buf
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

    def _take_event(self, rest_start: int) -> bytearray:
        """Hand over the event's data; what follows it starts a new buffer."""
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
        return data

    def _compact(self) -> None:
        """Drop consumed lines unless an event's data still lives in the buffer."""
        if self._data or not self._line_start:
            return
        del self._buf[:self._line_start]
        self._scan -= self._line_start
        self._line_start = 0


async def iter_frames(chunks: AsyncIterable[bytes]) -> AsyncIterator[bytearray]:
    reader = FrameReader()
    try:
        async for chunk in chunks:
            for frame in reader.feed(chunk):
                yield frame
        for frame in reader.close():
            yield frame
    finally:  # a stream cut or given up partway is no longer growing a line
        reader.release()
