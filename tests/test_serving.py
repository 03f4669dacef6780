"""The /v1 handler: a client that leaves stops the view, a server that stops cancels it, and
answers leave without being cut into 64 KiB messages; whoever reports a stream hears how its
sending went once it has ended. A stopping server gives back what it holds."""

from __future__ import annotations

import asyncio
import time
import uuid
import warnings

import pytest
from django.http import HttpResponse, StreamingHttpResponse

from studio.core import streams
from studio.gateway import counters
from studio.gateway.counter_types import Check
from studio.serving import ApiASGIHandler, Lifespan
from tests.gateway.spend_support import TEST_REDIS, redis_available

SCOPE = {"type": "http", "method": "POST", "path": "/v1/chat/completions", "raw_path": b"/v1/chat/completions",
         "query_string": b"", "headers": [(b"content-type", b"application/json")], "root_path": "",
         "client": ("127.0.0.1", 5000), "server": ("testserver", 80), "asgi": {"version": "3.0"}}


def handler_with_view(view) -> ApiASGIHandler:
    handler = ApiASGIHandler()
    handler.run_get_response = view  # the middleware and routes are not what is tested here
    return handler


async def capture(handler: ApiASGIHandler, receive) -> list[dict]:
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    await asyncio.wait_for(handler.handle(dict(SCOPE), receive, send), timeout=10)
    return sent


def messages(*items: dict):
    queue = list(items)
    forever = asyncio.Event()

    async def receive() -> dict:
        if queue:
            return queue.pop(0)
        await forever.wait()
        return {}

    return receive


async def test_a_client_that_leaves_stops_the_view():
    stopped = asyncio.Event()

    async def view(request):
        try:
            await asyncio.sleep(30)
        finally:
            stopped.set()

    receive = messages({"type": "http.request", "body": b"{}"}, {"type": "http.disconnect"})
    sent = await capture(handler_with_view(view), receive)
    assert stopped.is_set() and sent == []


async def test_a_stopping_server_cancels_the_request():
    started = asyncio.Event()

    async def view(request):
        started.set()
        await asyncio.sleep(30)

    handler = handler_with_view(view)
    task = asyncio.ensure_future(handler.handle(dict(SCOPE), messages({"type": "http.request", "body": b"{}"}),
                                                lambda message: asyncio.sleep(0)))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_answers_leave_whole_not_in_64_kib_slices():
    big = b"x" * 300_000

    async def buffered(request):
        return HttpResponse(big, content_type="application/json")

    async def pieces():
        yield big
        yield b"tail"

    async def streamed(request):
        return StreamingHttpResponse(pieces(), content_type="text/event-stream")

    request = {"type": "http.request", "body": b"{}"}
    sent = await capture(handler_with_view(buffered), messages(dict(request)))
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    assert sent[1]["body"] == big and not sent[1].get("more_body")
    sent = await capture(handler_with_view(streamed), messages(dict(request)))
    assert [m.get("body") for m in sent[1:]] == [big, b"tail", None]
    assert (b"Content-Type", b"text/event-stream") in sent[0]["headers"]  # as Django spells it


async def test_headers_leave_as_the_response_holds_them_answer_after_answer():
    """Names as Django spells them (each encoded once per process), values in latin-1, and the
    ones a view put straight into the header store as bytes leave as they are."""

    async def view(request):
        response = HttpResponse(b"{}", content_type="application/json")
        response["X-Studio-Note"] = "café"  # latin-1, not UTF-8, on the wire
        response.headers._store["x-raw"] = (b"X-Raw", b"raw;ok")
        return response

    request = {"type": "http.request", "body": b"{}"}
    for _ in range(2):
        sent = await capture(handler_with_view(view), messages(dict(request)))
        headers = sent[0]["headers"]
        assert (b"Content-Type", b"application/json") in headers
        assert (b"X-Studio-Note", "café".encode("latin-1")) in headers
        assert (b"X-Raw", b"raw;ok") in headers


async def test_a_big_bodys_slices_reach_the_server_as_they_are():
    """A memoryview (a 1 MiB slice of a big picture) goes to the server without a copy."""
    big = bytes(range(256)) * 8192
    slices = [memoryview(big)[:1 << 20], memoryview(big)[1 << 20:]]

    async def sliced():
        for piece in slices:
            yield piece

    async def streamed(request):
        return StreamingHttpResponse(sliced(), content_type="application/json")

    sent = await capture(handler_with_view(streamed), messages({"type": "http.request", "body": b"{}"}))
    bodies = [m.get("body") for m in sent[1:]]
    assert bodies[0] is slices[0] and bodies[1] is slices[1] and bodies[2] is None
    assert b"".join(bodies[:2]) == big


async def test_a_stream_sends_each_part_as_bytes_whatever_the_view_yields():
    async def mixed():
        yield "data: é\n\n"  # text, as Django would encode it
        yield b""  # nothing to send
        yield bytearray(b"data: 2\n\n")  # its bytes (Django's make_bytes would send its repr)
        yield b"data: 3\n\n"

    def lines():
        yield b"one\n"
        yield b"two\n"

    request = {"type": "http.request", "body": b"{}"}
    for view_parts, expected in ((mixed, ["data: é\n\n".encode(), b"data: 2\n\n", b"data: 3\n\n"]),
                                 (lines, [b"one\n", b"two\n"])):
        async def streamed(request, parts=view_parts):
            return StreamingHttpResponse(parts(), content_type="text/event-stream")

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Django warns that it reads a synchronous iterator in a thread
            sent = await capture(handler_with_view(streamed), messages(dict(request)))
        bodies = [m.get("body") for m in sent[1:]]
        assert bodies == [*expected, None] and all(type(b) is bytes for b in bodies[:-1])


async def test_a_stream_the_client_stops_reading_is_closed_before_the_request_ends():
    """A client that left while a part was on its way: the view's stream is closed at once, so
    its clean-up (what a cut stream is charged) runs within the request, not at some later
    garbage collection."""
    first_sent, closed = asyncio.Event(), []

    async def endless():
        try:
            while True:
                yield b"data: tick\n\n"
        finally:
            closed.append("closed")

    async def streamed(request):
        return StreamingHttpResponse(endless(), content_type="text/event-stream")

    async def receive() -> dict:
        if not first_sent.is_set() and not receive.asked:
            receive.asked = True
            return {"type": "http.request", "body": b"{}"}
        await first_sent.wait()
        return {"type": "http.disconnect"}

    receive.asked = False

    async def send(message: dict) -> None:
        if message.get("body"):
            first_sent.set()
            await asyncio.Event().wait()  # the client reads nothing more

    heard = []

    async def reported(request):
        streams.delivered.set(lambda status, first: heard.append((status, first is not None, list(closed))))
        return await streamed(request)

    await asyncio.wait_for(handler_with_view(reported).handle(dict(SCOPE), receive, send), timeout=10)
    assert closed == ["closed"]
    assert heard == [(499, True, ["closed"])]  # reported as cut, once the stream's clean-up has run


async def test_the_end_of_a_stream_is_reported_with_its_status_and_first_part():
    """The middleware that reports a request (``api.observe``) hears, in the request's own
    context, when a stream's first part went out and how it ended: with its status, or as 500
    when the view's stream fails; a buffered answer reports nothing here."""
    heard: list[tuple[int, float | None]] = []
    request = {"type": "http.request", "body": b"{}"}

    async def parts(fail: bool):
        await asyncio.sleep(0.05)
        yield b""  # nothing sent yet
        yield b"data: 1\n\n"
        if fail:
            raise RuntimeError("the upstream broke")
        yield b"data: 2\n\n"

    def view(fail: bool = False, stream: bool = True):
        async def respond(request):
            streams.delivered.set(lambda status, first: heard.append((status, first)))
            if not stream:
                return HttpResponse(b"{}", status=201)
            return StreamingHttpResponse(parts(fail), status=207, content_type="text/event-stream")
        return respond

    started = time.perf_counter()
    sent = await capture(handler_with_view(view()), messages(dict(request)))
    assert [m.get("body") for m in sent[1:]] == [b"data: 1\n\n", b"data: 2\n\n", None]
    assert len(heard) == 1 and heard[0][0] == 207 and heard[0][1] >= started + 0.05  # the first part sent

    heard.clear()
    with pytest.raises(RuntimeError):
        await capture(handler_with_view(view(fail=True)), messages(dict(request)))
    assert [status for status, _ in heard] == [500]

    heard.clear()
    await capture(handler_with_view(view(stream=False)), messages(dict(request)))
    assert heard == []


@pytest.mark.django_db(transaction=True)
async def test_a_stopping_server_gives_back_the_counter_units_it_holds(settings):
    if not redis_available():
        pytest.skip("no Redis at " + TEST_REDIS)
    settings.REDIS_URL = TEST_REDIS
    settings.STUDIO_COUNTER_PREFIX = f"test-stop:{uuid.uuid4().hex}:"
    store = counters.get()
    for _ in range(3):
        await store.apply([Check("rl:1:*:rpm:1", limit=10_000, need=1, add=1, ttl=120)])
    key = store.prefix + "rl:1:*:rpm:1"
    assert int(await store.redis.get(key)) > 3  # a lease: units taken ahead

    await Lifespan().shutdown()
    assert int(await store.redis.get(key)) == 3


@pytest.mark.django_db(transaction=True)
async def test_a_stopping_server_finishes_its_sandbox_renders_and_stops_their_callbacks(settings):
    from studio.models.sandbox import SandboxVideoJob
    from studio.sandbox import video_jobs

    settings.STUDIO_SANDBOX_VIDEO_SECONDS = 3600
    new = video_jobs.NewVideoJob(
        id=video_jobs.new_id("cgt-"), model="alpha-2.0-fast", prompt="a harbour at dawn", width=64, height=36,
        duration=1, seed=1, audio=False, want_last_frame=True, ratio="16:9", resolution="480p",
        callback_url="http://127.0.0.1:9/hook")
    job = await video_jobs.submit(new, record=lambda job: {"id": job.id})
    assert video_jobs.callback_senders() == 1

    await Lifespan().shutdown()
    stored = await SandboxVideoJob.objects.aget(id=job.id)
    assert stored.rendered_at is not None and stored.video_name and stored.last_frame_name
    assert video_jobs.callback_senders() == 0
