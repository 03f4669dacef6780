import pytest

from studio.providers.sse import SSEParser, format_event, iter_sse


def parse_all(chunks):
    parser = SSEParser()
    events = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.close())
    return events


def test_lf_and_crlf_and_comments():
    raw = b": keepalive\r\ndata: {\"a\":1}\r\n\r\nevent: ping\ndata: {}\n\n"
    events = parse_all([raw])
    assert [(e.event, e.data) for e in events] == [(None, b'{"a":1}'), ("ping", b"{}")]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
def test_any_chunking_gives_same_events(size):
    raw = b"data: one\r\n\r\nevent: x\r\ndata: two\r\ndata: three\r\n\r\ndata: four\n\n"
    chunks = [raw[i : i + size] for i in range(0, len(raw), size)]
    events = parse_all(chunks)
    assert [e.data for e in events] == [b"one", b"two\nthree", b"four"]
    assert events[1].event == "x"


def test_huge_line_without_limit():
    payload = b"x" * (16 * 1024 * 1024)
    raw = b"data: " + payload + b"\r\n\r\n"
    chunks = [raw[i : i + 65536] for i in range(0, len(raw), 65536)]
    events = parse_all(chunks)
    assert len(events) == 1 and len(events[0].data) == len(payload)


def test_event_without_trailing_blank_line_is_flushed():
    assert [e.data for e in parse_all([b"data: last"])] == [b"last"]


async def test_iter_sse_and_format_roundtrip():
    async def gen():
        yield format_event(b'{"k":1}', "image_generation.completed")
        yield format_event(b"[DONE]")

    events = [e async for e in iter_sse(gen())]
    assert events[0].event == "image_generation.completed" and events[1].data == b"[DONE]"


async def test_iter_sse_marks_the_events_that_have_more_in_the_same_read():
    async def gen():
        yield format_event(b"1") + format_event(b"2") + b"data: 3"  # two whole events and a part
        yield b"\n\n" + format_event(b"4")

    events = [(e.data, e.more) async for e in iter_sse(gen())]
    assert events == [(b"1", True), (b"2", False), (b"3", True), (b"4", False)]
