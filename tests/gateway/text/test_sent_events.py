"""The count of the events a stream has sent: exact however its pieces fall, and a long stream
holds no more than ``HELD_BYTES`` of them."""

from __future__ import annotations

from studio.gateway.text import sent_events
from studio.gateway.text.sent_events import SentEvents


def event(n: int, size: int = 20) -> bytes:
    return b"event: response.output_text.delta\ndata: " + b'{"n":%d,"pad":"%s"}' % (n, b"x" * size) + b"\n\n"


def test_nothing_sent_is_none_and_pieces_of_several_events_count_each() -> None:
    sent = SentEvents()
    assert sent.count() == 0
    sent.add(event(0) + event(1) + event(2))
    sent.add(event(3))
    assert sent.count() == 4


def test_a_long_stream_is_counted_as_it_goes_and_holds_little(monkeypatch) -> None:
    monkeypatch.setattr(sent_events, "HELD_BYTES", 1000)
    sent = SentEvents()
    for n in range(500):
        sent.add(event(n, size=n % 50))
        assert sent.size <= 1000 + len(event(n, size=50))
        assert len(sent.held) < 20
    assert sent.count() == 500
    sent.add(event(500) + event(501))
    assert sent.count() == 502
