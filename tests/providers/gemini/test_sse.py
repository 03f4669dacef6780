"""The Gemini ``alt=sse`` reader: every line ending, comments, any chunking, no line limit, and a
big frame handed over in the buffer it was read into."""

from __future__ import annotations

import asyncio
import tracemalloc

import pytest

from studio.core.errors import UpstreamError
from studio.core.open_frames import FrameHead, FrameTail, StringPiece
from studio.providers.gemini.sse import FrameReader, iter_frames


def read_all(stream: bytes, step: int) -> list[bytes]:
    reader = FrameReader()
    out = []
    for i in range(0, len(stream), step):
        out += [bytes(f) for f in reader.feed(stream[i:i + step])]
    return out + [bytes(f) for f in reader.close()]


@pytest.mark.parametrize("step", [1, 2, 3, 7, 64, 10_000])
@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_reader_accepts_every_line_ending_comments_and_any_chunking(step, newline):
    n = newline
    stream = (b": keepalive" + n + b"data: {\"a\":1}" + n + n + b"event: x" + n + b"id: 7" + n
              + b"data:{\"b\":2}" + n + n + b"data: line1" + n + b"data: line2" + n + n + b"data: {\"tail\":3}")
    assert read_all(stream, step) == [b'{"a":1}', b'{"b":2}', b"line1\nline2", b'{"tail":3}']


def test_reader_has_no_line_limit_and_hands_over_the_buffer():
    big = b'{"x":"' + b"A" * 12_000_000 + b'"}'
    stream = b"data: " + big + b"\r\n\r\ndata: {}\r\n\r\n"
    reader = FrameReader()
    frames = []
    for i in range(0, len(stream), 65536):
        frames += reader.feed(stream[i:i + 65536])
    assert [len(f) for f in frames] == [len(big), 2]
    assert frames[0] == big and isinstance(frames[0], bytearray)


def test_a_big_frame_is_held_once_while_it_arrives():
    """A 4K picture's frame read from the socket in 64 KB chunks: at no moment are its bytes held
    twice (the chunks gone by and a copy of them joined), so a frame costs its size, not double."""
    line = b"data: " + b'{"x":"' + b"A" * 12_000_000 + b'"}' + b"\n\n"
    reader = FrameReader()
    tracemalloc.start()
    try:
        frames = []
        for i in range(0, len(line), 65536):
            frames += reader.feed(line[i:i + 65536])  # each chunk a fresh object, as from a socket
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(frames) == 1 and len(frames[0]) == 12_000_008
    assert peak < 1.5 * len(frames[0])


@pytest.mark.parametrize("step", [65_535, 100_000, 1 << 20])
@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_reader_keeps_big_frames_whole_in_a_row_and_at_the_end(step, newline):
    # Long lines that span many chunks: a CR split from its LF, two big
    # frames back to back, and a last big frame the stream ends without a blank line after.
    frames = [b'{"x":"' + bytes([65 + i]) * (300_000 + i * 77_777) + b'"}' for i in range(3)]
    stream = (b"data: " + frames[0] + newline + newline + b": ping" + newline + b"data: " + frames[1] + newline
              + newline + b"data: " + frames[2] + newline)
    assert read_all(stream, step) == frames


async def test_frames_of_an_async_byte_stream():
    async def chunks():
        yield b"data: {\"a\":"
        yield b"1}\n\ndata: {\"b\":2}"

    assert [bytes(f) async for f in iter_frames(chunks())] == [b'{"a":1}', b'{"b":2}']


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_long_lines_growing_at_once_grow_in_a_few_steps_and_arrive_whole(newline, monkeypatch):
    """Several 4K frames arriving at once in one process: each reader appends its chunks in a few
    large steps (a buffer grown chunk by chunk beside others is copied whole again and again),
    every frame arrives whole, and the process's count of long lines is back to zero."""
    monkeypatch.setattr(FrameReader, "long_lines", 0)  # whatever streams of other tests left
    frames = [b'{"x":"' + bytes([65 + i]) * (6_000_000 + i * 999) + b'"}' for i in range(3)]
    lines = [b"data: " + f + newline + newline for f in frames]
    readers = [FrameReader() for _ in lines]
    got: list[list[bytes]] = [[] for _ in lines]
    sizes: list[set[int]] = [set() for _ in lines]
    step = 65_536
    for start in range(0, max(map(len, lines)), step):
        for i, (reader, line) in enumerate(zip(readers, lines, strict=True)):
            got[i] += [bytes(f) for f in reader.feed(line[start:start + step])]
            if len(reader._buf) > FrameReader.HOLD:
                sizes[i].add(len(reader._buf))
    for i, reader in enumerate(readers):
        got[i] += [bytes(f) for f in reader.close()]  # a last CR may yet be half of a CRLF
    assert got == [[f] for f in frames]
    # Past its first 1 MB, a 6 MB line in 64 KB chunks grown chunk by chunk takes some eighty
    # sizes, each a chance to be moved; here a handful.
    assert all(len(s) <= 8 for s in sizes), [len(s) for s in sizes]
    assert FrameReader.long_lines == 0


def test_a_lone_long_line_grows_as_it_comes(monkeypatch):
    monkeypatch.setattr(FrameReader, "long_lines", 0)
    reader = FrameReader()
    line = b"data: " + b"B" * 3_000_000
    for start in range(0, len(line), 65_536):
        reader.feed(line[start:start + 65_536])
    assert len(reader._buf) == len(line) and not reader._held  # nothing held apart
    assert FrameReader.long_lines == 1
    assert reader.close() == [bytearray(b"B" * 3_000_000)]
    assert FrameReader.long_lines == 0


async def test_a_stream_given_up_inside_a_long_line_is_no_longer_counted(monkeypatch):
    monkeypatch.setattr(FrameReader, "long_lines", 0)

    async def chunks():
        yield b"data: " + b"C" * 2_000_000
        yield b"C" * 65_536
        raise ConnectionResetError("cut")

    with pytest.raises(ConnectionResetError):  # the upstream cut the stream
        async for _ in iter_frames(chunks()):
            pass
    assert FrameReader.long_lines == 0

    async def stalled():
        yield b"data: " + b"D" * 2_000_000
        yield b"D" * 65_536
        await asyncio.Event().wait()  # the rest never comes
        yield b""

    async def read() -> None:
        async for _ in iter_frames(stalled()):
            pass

    task = asyncio.create_task(read())
    for _ in range(100):
        if FrameReader.long_lines:
            break
        await asyncio.sleep(0)
    assert FrameReader.long_lines == 1
    task.cancel()  # the client left: its request's task is cancelled
    with pytest.raises(asyncio.CancelledError):
        await task
    assert FrameReader.long_lines == 0


# -- a reader that opens big frames ------------------------------------------------------------------

def read_passing(stream: bytes, step: int) -> tuple[list[bytes], list[int]]:
    """The frames a passing reader hands on (an open frame's parts joined) and, for each, how
    many parts it came in (1: whole)."""
    reader = FrameReader(passing=True)
    parts: list = []
    for i in range(0, len(stream), step):
        parts += reader.feed(stream[i:i + step])
    parts += reader.close()
    assert not reader.in_string
    frames, counts, open_frame = [], [], None
    for part in parts:
        if isinstance(part, FrameHead):
            assert open_frame is None
            open_frame = [part.data]
        elif isinstance(part, StringPiece):
            open_frame.append(part.data)
        elif isinstance(part, FrameTail):
            frames.append(b"".join([*open_frame, bytes(part.data)]))
            counts.append(len(open_frame) + 1)
            open_frame = None
        else:
            assert open_frame is None
            frames.append(bytes(part))
            counts.append(1)
    assert open_frame is None
    return frames, counts


def picture_frame(size: int, fill: bytes = b"Q", extra: bytes = b"") -> bytes:
    return (b'{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/png","data":"'
            + fill * size + extra + b'"}}],"role":"model"},"finishReason":"STOP"}],'
            + b'"usageMetadata":{"totalTokenCount":7},"modelVersion":"m-1"}')


@pytest.mark.parametrize("step", [65_536, 100_003, 1 << 20])
@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_a_passing_reader_opens_big_frames_and_their_parts_are_the_frame(step, newline):
    """Big frames leave as head, pieces and tail, which joined are the frame byte for byte: back
    to back, among small frames and comments, and as the last line of a stream with no blank
    line after it; small frames stay whole, and so does a line that ends in the chunk after the one
    where it outgrew ``OPEN_AT`` (nothing is left to relay early)."""
    n = newline
    frames = [picture_frame(3_000_000), b'{"small":1}', picture_frame(2_500_000, b"R"), picture_frame(300_000, b"S")]
    stream = (b"data: " + frames[0] + n + n + b": ping" + n + b"data: " + frames[1] + n + n
              + b"data: " + frames[2] + n + n + b"data: " + frames[3] + n)
    got, counts = read_passing(stream, step)
    assert got == frames
    assert counts[1] == 1 and counts[0] > 3 and counts[2] > 3
    assert counts[3] >= 3 or step == 1 << 20


@pytest.mark.parametrize("step", [65_536, 65_537, 65_538])
def test_escapes_in_a_passed_string_do_not_end_it_wherever_the_chunks_split_them(step):
    """An escaped quote, escaped slashes and a run of backslashes split across chunks: the string
    ends only at its real closing quote."""
    body = b"A" * (2 * 65_536 - 3) + b'\\"' + b"\\\\" * 3 + b"\\/" + b"B" * 70_000 + b"\\\\"
    frame = picture_frame(1_200_000, extra=body)
    got, counts = read_passing(b"data: " + frame + b"\n\ndata: {}\n\n", step)
    assert got == [frame, b"{}"] and counts[0] > 3


def test_a_long_line_that_is_not_one_string_is_read_whole():
    """A line long for many short strings, or a long line of another field, is not opened."""
    many = b'{"parts":[' + b",".join([b'{"text":"' + b"w" * 1000 + b'"}'] * 1500) + b"]}"
    stream = b"event: " + b"e" * 1_100_000 + b"\ndata: " + many + b"\n\ndata: {}\n\n"
    got, counts = read_passing(stream, 65_536)
    assert got == [many, b"{}"] and counts == [1, 1]


async def test_a_stream_that_ends_inside_an_open_frame_is_the_upstreams_failure():
    frame = picture_frame(2_000_000)

    async def chunks():
        line = b"data: " + frame
        for i in range(0, len(line) // 2, 65_536):
            yield line[i:i + 65_536]

    parts = []
    with pytest.raises(UpstreamError, match="inside an answer frame"):
        async for part in iter_frames(chunks(), passing=True):
            parts.append(part)
    assert isinstance(parts[0], FrameHead) and all(isinstance(p, StringPiece) for p in parts[1:])
