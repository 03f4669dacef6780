"""Deadlines per family: a hang before the first byte and a body that never ends are typed timeouts."""

from __future__ import annotations

import asyncio

import pytest

from studio.core.errors import UpstreamTimeout
from studio.providers import http
from studio.providers.asgi_transport import StreamingASGITransport
from studio.providers.contracts import Capability
from studio.providers.deadlines import Bound, Deadlines, deadlines_for
from studio.providers.openai.provider import OpenAIProvider
from tests.providers.video_fakes import upstream

BASE = "https://slow-vendor.test"


class SlowVendor:
    """Waits ``before`` seconds before its status line, then drips ``chunks`` pieces ``between`` apart."""

    def __init__(self, before: float = 0.0, between: float = 0.0, chunks: int = 1) -> None:
        self.before, self.between, self.chunks = before, between, chunks

    async def __call__(self, scope, receive, send) -> None:
        while (await receive()).get("more_body"):
            pass
        await asyncio.sleep(self.before)
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        for _ in range(self.chunks):
            await send({"type": "http.response.body", "body": b"x", "more_body": True})
            await asyncio.sleep(self.between)
        await send({"type": "http.response.body", "body": b""})


@pytest.fixture
def vendor():
    def mount(app: SlowVendor) -> OpenAIProvider:
        http.mount(BASE, StreamingASGITransport(app))
        return OpenAIProvider(upstream("openai", BASE, "k"), deadlines=Deadlines(connect=1, first_byte=0.2, total=0.6))

    yield mount
    http.unmount(BASE)


def test_each_family_has_its_deadlines_and_settings_override_them(settings):
    assert deadlines_for(Capability.TEXT).first_byte < deadlines_for(Capability.IMAGES).first_byte
    assert deadlines_for(Capability.NATIVE_IMAGE) == deadlines_for(Capability.IMAGES)
    settings.STUDIO_UPSTREAM_DEADLINES = {**settings.STUDIO_UPSTREAM_DEADLINES,
                                          "text": {"connect": 2, "first_byte": 3, "total": 4}}
    assert deadlines_for(Capability.TEXT) == Deadlines(2, 3, 4)


async def test_no_first_byte_in_time_is_a_first_byte_timeout(vendor):
    provider = vendor(SlowVendor(before=30))
    with pytest.raises(UpstreamTimeout) as caught:
        await provider.request("POST", "/chat/completions", json={})
    assert caught.value.details["timeout"] == "first_byte" and caught.value.status == 504
    assert caught.value.retryable


async def test_a_buffered_answer_past_the_deadline_is_a_timeout(vendor):
    provider = vendor(SlowVendor(between=0.25, chunks=40))
    with pytest.raises(UpstreamTimeout) as caught:
        await provider.request("POST", "/chat/completions", json={})
    assert caught.value.details["timeout"] == "total"


async def test_a_stream_past_the_deadline_stops_with_a_timeout(vendor):
    provider = vendor(SlowVendor(between=0.25, chunks=40))
    received = b""
    with pytest.raises(UpstreamTimeout) as caught:
        async with provider.stream("POST", "/chat/completions") as response:
            async for chunk in response.aiter_bytes():
                received += chunk
    assert caught.value.details["timeout"] == "total"
    assert received.startswith(b"x") and len(received) < 40  # what came in time was relayed


async def test_answers_within_the_deadlines_are_untouched(vendor):
    provider = vendor(SlowVendor(chunks=5))
    assert (await provider.request("POST", "/chat/completions", json={})).content == b"xxxxx"


async def test_a_buffered_body_may_take_past_the_first_byte_deadline_within_the_overall_one(vendor):
    provider = vendor(SlowVendor(before=0.1, between=0.12, chunks=3))  # its last byte at about 0.46 s
    assert (await provider.request("POST", "/chat/completions", json={})).content == b"xxx"


async def test_a_stream_whose_deadline_passes_between_reads_ends_at_the_next_read_not_in_the_readers_code(vendor):
    """The reader's own work between chunks (sending to its client) is never cut by the deadline."""
    provider = vendor(SlowVendor(chunks=3))
    slept = False
    with pytest.raises(UpstreamTimeout) as caught:
        async with provider.stream("POST", "/chat/completions") as response:
            async for _chunk in response.aiter_raw():
                if not slept:
                    await asyncio.sleep(0.7)  # past the overall deadline (0.6 s), outside any read
                    slept = True
    assert slept and caught.value.details["timeout"] == "total"


async def test_a_streams_deadline_timer_is_stopped_at_its_end_and_when_it_is_closed(vendor):
    provider = vendor(SlowVendor(chunks=3))
    async with provider.stream("POST", "/chat/completions") as response:
        assert b"".join([chunk async for chunk in response.aiter_raw()]) == b"xxx"
        assert response.stream.reads is not None and response.stream.reads.timer is None
    provider = vendor(SlowVendor(chunks=5, between=0.05))
    async with provider.stream("POST", "/chat/completions") as response:
        async for _chunk in response.aiter_raw():
            break
        reads = response.stream.reads
        assert reads.timer is not None  # the stream is not over: its deadline still holds
    assert reads.timer is None  # closed with the response
    await asyncio.sleep(0.7)  # past the deadline: nothing of the closed stream wakes up


async def test_a_bound_moved_later_waits_for_its_new_deadline():
    loop = asyncio.get_running_loop()
    with Bound(loop.time() + 0.05) as bound:
        bound.due = loop.time() + 0.3
        await asyncio.sleep(0.15)  # past the first deadline: not cut
    with pytest.raises(TimeoutError), Bound(loop.time() + 0.05) as bound:
        bound.due = loop.time() + 0.2
        await asyncio.sleep(1)


async def test_a_bound_without_a_deadline_and_a_cancellation_from_outside_are_left_as_they_are():
    with Bound(None):
        await asyncio.sleep(0.01)

    async def bounded() -> None:
        with Bound(asyncio.get_running_loop().time() + 5):
            await asyncio.sleep(1)

    task = asyncio.create_task(bounded())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
