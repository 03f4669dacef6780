"""The Gemini ``alt=sse`` reader: every line ending, comments, any chunking, no line limit, and a
big frame handed over in the buffer it was read into."""

from __future__ import annotations

import tracemalloc

import pytest

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
