import pytest

from studio.providers.sse import SSEEvent, SSEParser, format_event, iter_sse, iter_sse_reads


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


async def test_iter_sse_reads_groups_the_events_each_read_completed():
    async def gen():
        yield format_event(b"1") + format_event(b"2") + b"data: 3"  # two whole events and a part
        yield b"\n\n" + format_event(b"4")
        yield b"data: 5"  # completes nothing
        yield b"\n"  # the stream ends without the blank line

    reads = [[e.data for e in events] async for events in iter_sse_reads(gen())]
    assert reads == [[b"1", b"2"], [b"3", b"4"], [b"5"]]


# Whole events in LF-only reads take a quicker path than a read that ends mid-line or holds a CR;
# every way of cutting the stream must give the same events.
MIXED = (b"data: {\"a\":1}\n\n"  # a lone data line
         b"event: message_start\ndata: {\"b\":2}\n\n"  # named
         b": keepalive\n\n"  # a comment alone
         b"id: 7\ndata: first\ndata: second\n\n"  # an id, and two data lines
         b"data:tight\n\n"  # no space after the colon
         b"event: ping\n\n"  # a name and no data: no event
         b"data: after\n\n\n"  # an extra blank line
         b"retry: 10\ndata: last\n\n")
MIXED_EVENTS = [(None, b'{"a":1}', None), ("message_start", b'{"b":2}', None), (None, b"first\nsecond", "7"),
                (None, b"tight", "7"), (None, b"after", "7"), (None, b"last", "7")]


def test_every_cut_of_a_mixed_stream_gives_the_same_events():
    expected = [(e.event, e.data, e.id) for e in parse_all([MIXED])]
    assert expected == MIXED_EVENTS
    for cut in range(1, len(MIXED)):
        for second in (cut, min(cut + 9, len(MIXED))):
            chunks = [MIXED[:cut], MIXED[cut:second], MIXED[second:]]
            assert [(e.event, e.data, e.id) for e in parse_all(chunks)] == MIXED_EVENTS, (cut, second)


def test_a_read_of_lone_data_lines_keeps_its_bytes_and_gives_the_events_the_line_parser_gives():
    plain = b'data: {"a":1}\n\ndata: \n\ndata: [DONE]\n\n'
    read = SSEParser().feed(plain)
    assert read.raw == plain
    assert [(e.event, e.data, e.id) for e in read] == [(None, b'{"a":1}', None), (None, b"", None), (None, b"[DONE]", None)]
    # The same bytes cut in two go through the line parser: the same events.
    assert [(e.event, e.data) for e in parse_all([plain[:5], plain[5:]])] == [(e.event, e.data) for e in read]
    assert read.head(2).raw == b'data: {"a":1}\n\ndata: \n\n' and list(read.head(2)) == read[:2]
    assert read.head(0).raw == b"" and read.head(3).raw == plain
    # Anything else in a read: its events, without bytes to pass on.
    for other in (b"event: x\ndata: 1\n\n", b"data: 1\r\n\r\n", b": ping\n\ndata: 1\n\n", b"data: 1\ndata: 2\n\n",
                  b"data: 1\n\n\n", b"data:1\n\n", b"id: 4\ndata: 1\n\n"):
        found = SSEParser().feed(other)
        assert found.raw is None and found.head(1).raw is None, other
        assert [e.data for e in found] == [e.data for e in parse_all([other])]
    # After a read that ended within an event, the next one completes it the long way.
    parser = SSEParser()
    assert list(parser.feed(b"data: 1\n\ndata: 2")) == [SSEEvent(b"1")]
    rest = parser.feed(b"\n\ndata: 3\n\n")
    assert [e.data for e in rest] == [b"2", b"3"] and rest.raw is None
    assert parser.feed(b"data: 4\n\n").raw == b"data: 4\n\n"


def test_a_read_of_named_events_keeps_its_bytes_for_a_relay_and_cuts_them_at_its_events():
    named = (b'event: message_start\ndata: {"a":1}\n\nevent: content_block_delta\ndata: {"b":2}\n\n'
             b'data: {"c":3}\n\nevent: \ndata: 4\n\n')
    read = SSEParser().feed(named)
    assert read.framed == named and read.raw is None  # named events: no ``raw``
    assert [(e.event, e.data) for e in read] == [("message_start", b'{"a":1}'), ("content_block_delta", b'{"b":2}'),
                                                 (None, b'{"c":3}'), ("", b"4")]
    assert [(e.event, e.data) for e in read] == [(e.event, e.data) for e in parse_all([named[:7], named[7:]])]
    # Cut at any event, the bytes are those of the events kept.
    ends = [i + 2 for i in range(len(named) - 1) if named[i:i + 2] == b"\n\n"]
    for count in range(5):
        head = read.head(count)
        assert head.framed == named[:ends[count - 1] if count else 0] and list(head) == read[:count]
        assert head.raw is None
    # Lone data lines: both, the same bytes.
    plain = SSEParser().feed(b"data: 1\n\ndata: 2\n\n")
    assert plain.framed is plain.raw == b"data: 1\n\ndata: 2\n\n" and plain.head(1).framed == b"data: 1\n\n"
    # Anything else (CRs, comments, ids, two data lines, a part of an event, no space): no bytes.
    for other in (b"event: x\r\ndata: 1\r\n\r\n", b": ping\n\nevent: x\ndata: 1\n\n", b"event: x\ndata: 1\ndata: 2\n\n",
                  b"id: 4\nevent: x\ndata: 1\n\n", b"event: x\ndata: 1\n\nevent: y\ndata:", b"event:x\ndata: 1\n\n",
                  b"event: x\nevent: y\ndata: 1\n\n"):
        found = SSEParser().feed(other)
        assert found.framed is None and found.head(0).framed is None, other
        assert [(e.event, e.data) for e in found] == [(e.event, e.data) for e in parse_all([other])][:len(found)]


def test_a_read_of_named_events_only_gives_the_events_the_line_parser_gives():
    """Such a read (a messages or responses stream's every read) is cut at its events' starts;
    anything that only looks like one goes the long way, to the same events."""
    reads = [
        b'event: response.created\ndata: {"a":1}\n\nevent: response.output_text.delta\ndata: {"b":2}\n\n',
        b"event: one\ndata: 1\n\n",  # a paced stream's read: one event
        b"event: a data: b\ndata: c\n\n",  # a name holding "data: "
        b"event: \ndata: 4\n\n",  # an empty name
        b"event: x\ndata: event: y\n\n",  # a payload holding "event: "
        b"event: a\nid: 1\ndata: x\n\nevent: b\n\n",  # three newlines an event, but not one in each
        b"event: x\nevent: y\ndata: 1\n\n",  # two names
        b"event: x\ndata: 1\ndata: 2\n\n",  # two data lines
        b"event: x\ndata: 1\n\ndata: 2\n\n",  # a lone data line after it
        b"event: x\ndata:1\n\n",  # no space
        b"event: x\n\n",  # no data: no event
    ]
    for raw in reads:
        expected = [(e.event, e.data, e.id) for e in parse_all([raw[:1], raw[1:]])]
        read = SSEParser().feed(raw)
        assert [(e.event, e.data, e.id) for e in read] == expected, raw
        assert read.framed in (raw, None) and read.raw is None
    assert SSEParser().feed(reads[0]).framed == reads[0]
    # An id from an earlier read goes with them.
    parser = SSEParser()
    parser.feed(b"id: 9\ndata: 0\n\n")
    assert [(e.event, e.id) for e in parser.feed(reads[1])] == [("one", "9")]


def test_event_names_read_the_same_before_and_after_the_parser_has_kept_them():
    names = [f"event_{n}" for n in range(300)] + ["caf\xe9"]  # more names than are kept
    stream = b"".join(b"event: " + name.encode() + b"\ndata: 1\n\n" for name in names) + b"event: \xff\ndata: 2\n\n"
    for _ in range(2):
        read = SSEParser().feed(stream)
        assert [e.event for e in read] == [*names, "\ufffd"]
        assert read.framed == stream
        assert [(e.event, e.data) for e in read] == [(e.event, e.data) for e in parse_all([stream[:9], stream[9:]])]
