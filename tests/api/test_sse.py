"""An event stream's response is the one Django's constructor and header setter make."""

from __future__ import annotations

from django.http import StreamingHttpResponse

from api.sse import EventStream


async def events():
    yield b"data: 1\n\n"
    yield b"data: 2\n\n"


async def test_an_event_stream_is_the_response_django_makes():
    ours = EventStream(events())
    theirs = StreamingHttpResponse(events(), content_type="text/event-stream")
    theirs["Cache-Control"] = "no-cache"
    theirs["X-Accel-Buffering"] = "no"
    assert type(ours).__mro__[1:] == type(theirs).__mro__
    assert vars(ours).keys() == vars(theirs).keys()
    for name, value in vars(theirs).items():
        if name not in ("headers", "cookies", "_iterator"):
            assert getattr(ours, name) == value, name
    assert list(ours.headers.items()) == list(theirs.headers.items())
    assert ours.serialize_headers() == theirs.serialize_headers()
    assert (ours.streaming, ours.is_async, ours.status_code, ours.reason_phrase, ours.charset) == (
        theirs.streaming, theirs.is_async, theirs.status_code, theirs.reason_phrase, theirs.charset)
    ours["x-extra"] = theirs["x-extra"] = "1"  # and it is used as one
    assert list(ours.items()) == list(theirs.items())
    assert [part async for part in ours] == [part async for part in theirs] == [b"data: 1\n\n", b"data: 2\n\n"]


def test_each_stream_has_headers_of_its_own():
    first, second = EventStream(events()), EventStream(events())
    first["Cache-Control"] = "no-store"
    assert second["Cache-Control"] == "no-cache"
