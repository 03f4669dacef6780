"""A 4K image is one SSE frame of 10-20 MB: relayed without buffering, decoded and stored once.

The memory measure is the extra peak of Python allocations (tracemalloc, all threads) while one
request goes through the ASGI app, from a fake upstream serving a prepared frame (so the cost
of drawing the image is not counted), until its record is persisted; it is compared with the
frame size.
"""

# ruff: noqa: F811  (fixtures imported from native_fakes are used as test arguments)

from __future__ import annotations

import asyncio
import base64
import gc
import hashlib
import io
import os
import tracemalloc

import httpx
import orjson
import pytest
from PIL import Image

from studio.gateway import recording
from studio.providers.asgi_transport import StreamingASGITransport
from tests.api.native.native_fakes import (  # noqa: F401
    IMAGE_FRAME_COST,
    Reply,
    fake_gemini,
    image_frame,
    json_reply,
    sse,
    text_frame,
)

pytestmark = pytest.mark.django_db(transaction=True)

MODEL = "delta-3.1-flash-image"
BODY = {"contents": [{"role": "user", "parts": [{"text": "a 4K scene"}]}],
        "generationConfig": {"imageConfig": {"imageSize": "4K", "aspectRatio": "1:1"}}}


def big_png(side: int = 1900) -> bytes:
    """A real PNG of incompressible noise: about side*side*3 bytes (11 MB for 1900)."""
    image = Image.frombytes("RGB", (side, side), os.urandom(side * side * 3))
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=0)
    return out.getvalue()


def platform_named(frame: bytes) -> bytes:
    """What the client receives: ``modelVersion`` names the platform model, not the vendor's."""
    return frame.replace(b'"modelVersion":"gemini-3.1-flash-image-preview"', b'"modelVersion":"' + MODEL.encode() + b'"')


def network_chunks(data: bytes, size: int = 64 * 1024) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


@pytest.fixture
async def streaming_client():
    """Reads our app's answer as it is written (httpx's own ASGI transport would buffer it)."""
    from studio.asgi import application

    async with httpx.AsyncClient(transport=StreamingASGITransport(application), base_url="http://testserver",
                                 timeout=60) as c:
        yield c


async def measured_request(client, path: str, secret: str) -> tuple[int, str]:
    """(extra peak bytes, sha256 of what the client received) for one request and its record."""
    gc.collect()
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        digest = hashlib.sha256()
        async with client.stream("POST", path, json=BODY, headers={"x-delta-api-key": secret}) as response:
            assert response.status_code == 200
            async for chunk in response.aiter_raw():
                digest.update(chunk)
        await recording.drain()
        peak = tracemalloc.get_traced_memory()[1] - baseline
    finally:
        tracemalloc.stop()
    return peak, digest.hexdigest()


async def stored_image(alice) -> bytes:
    from studio.models import Asset, Generation

    generation = await Generation.objects.filter(user=alice.user).alatest("started_at")
    assert generation.status == "succeeded"
    asset = await Asset.objects.aget(generation=generation)
    with asset.file.open("rb") as f:
        return f.read()


async def test_streamed_4k_frame_extra_peak_under_twice_the_frame(streaming_client, alice, fake_gemini):
    png = big_png()
    frames = sse(text_frame("Here it is", thoughtSignature="c2ln"), image_frame(base64.b64encode(png).decode()))
    frame_size = len(frames[1])
    assert 14_000_000 < frame_size < 20_000_000
    # Relayed byte for byte but for ``modelVersion`` (the platform model); our framing ends events
    # with LF, which every SSE client reads. The final frame gains the call's cost in its usage:
    # (5 x $0.50 + 1120 x $60) per million tokens.
    relayed = [platform_named(f).replace(b"\r\n", b"\n") for f in frames]
    relayed[-1] = relayed[-1].replace(b'"usageMetadata":{', b'"usageMetadata":{"costUsd":0.0672025,')
    expected = hashlib.sha256(b"".join(relayed)).hexdigest()
    del relayed
    warm = sse(text_frame("warm", thoughtSignature="c2ln"), image_frame(base64.b64encode(big_png(64)).decode()))
    fake_gemini["fake-gemini"].queue(
        Reply(200, warm, content_type="text/event-stream"),
        Reply(200, [frames[0], *network_chunks(frames[1])], content_type="text/event-stream"),
    )
    del frames
    path = f"/v1/models/{MODEL}:streamGenerateContent"
    await measured_request(streaming_client, path, alice.secret)  # warm: one-time allocations
    peak, received = await measured_request(streaming_client, path, alice.secret)

    assert received == expected
    assert await stored_image(alice) == png  # decoded and stored intact
    ratio = peak / frame_size
    print(f"streamed: frame {frame_size / 1e6:.1f} MB, extra peak {peak / 1e6:.1f} MB, ratio {ratio:.2f}")
    assert ratio < 2.0


async def test_buffered_4k_answer_extra_peak_under_twice_the_body(streaming_client, alice, fake_gemini):
    png = big_png()
    answer = json_reply(image_frame(base64.b64encode(png).decode()))
    size = len(answer.chunks[0])
    expected = hashlib.sha256(platform_named(answer.chunks[0])).hexdigest()
    answer.chunks = network_chunks(answer.chunks[0])
    fake_gemini["fake-gemini"].queue(json_reply(image_frame(base64.b64encode(big_png(64)).decode())), answer)
    path = f"/v1/models/{MODEL}:generateContent"
    await measured_request(streaming_client, path, alice.secret)
    peak, received = await measured_request(streaming_client, path, alice.secret)

    assert received == expected
    assert await stored_image(alice) == png
    ratio = peak / size
    print(f"buffered: body {size / 1e6:.1f} MB, extra peak {peak / 1e6:.1f} MB, ratio {ratio:.2f}")
    assert ratio < 2.0


async def test_a_4k_stream_ends_once_its_image_is_stored(streaming_client, alice, fake_gemini):
    # The recorder's backlog is by default smaller than one 4K frame: a client streaming 4K images
    # one after another holds one frame in the gateway at a time, not a queue of them waiting to
    # be written. So when a 4K stream has ended, its image is already in the gallery.
    from studio.models import Asset, Generation

    png = big_png()
    fake_gemini["fake-gemini"].queue(Reply(200, network_chunks(b"".join(sse(image_frame(base64.b64encode(png).decode())))),
                                           content_type="text/event-stream"))
    path = f"/v1/models/{MODEL}:streamGenerateContent"
    async with streaming_client.stream("POST", path, json=BODY, headers={"x-delta-api-key": alice.secret}) as response:
        assert response.status_code == 200
        received = b"".join([chunk async for chunk in response.aiter_raw()])
    assert len(received) > 14_000_000
    assert recording.get_recorder().pending_bytes == 0  # nothing left waiting: no drain needed
    generation = await Generation.objects.filter(user=alice.user).aget()
    assert generation.status == "succeeded"
    assert (await Asset.objects.aget(generation=generation)).bytes == len(png)


def relayed_frame(frame: bytes) -> bytes:
    """A final image frame as the client gets it: the platform's model, the call's cost, LF framing."""
    return platform_named(frame).replace(b"\r\n", b"\n").replace(
        b'"usageMetadata":{', b'"usageMetadata":{"costUsd":%s,' % str(IMAGE_FRAME_COST).encode())


async def test_a_4k_frame_reaches_the_client_while_the_vendor_still_sends_it(streaming_client, alice, fake_gemini):
    """As a byte relay would, the gateway hands on a big frame as it arrives: the client holds its
    first megabytes while the vendor still holds back the rest (a gateway that read the frame
    whole first would wait for the vendor forever here). In the end the client has the frame,
    named and costed, and the gallery has the picture."""
    png = big_png(1200)
    chunks = network_chunks(sse(image_frame(base64.b64encode(png).decode()))[0])
    rest = asyncio.Event()
    fake_gemini["fake-gemini"].queue(Reply(200, chunks[:len(chunks) // 2], content_type="text/event-stream",
                                           hold=rest, then=chunks[len(chunks) // 2:]))
    received = bytearray()

    async def read() -> None:
        path = f"/v1/models/{MODEL}:streamGenerateContent"
        async with streaming_client.stream("POST", path, json=BODY, headers={"x-delta-api-key": alice.secret}) as response:
            assert response.status_code == 200
            async for chunk in response.aiter_raw():
                received.extend(chunk)
                if len(received) > 1_500_000:
                    rest.set()

    await asyncio.wait_for(read(), timeout=30)
    assert bytes(received) == relayed_frame(b"".join(chunks))
    await recording.drain()
    assert await stored_image(alice) == png


async def test_a_vendor_that_drops_a_4k_frame_halfway_cuts_the_answer_off(streaming_client, alice, fake_gemini):
    """The client already has half a frame: no error event can follow inside its ``data`` line, so
    the answer is cut off as a dropped connection, and the call is recorded as failed."""
    from studio.models import Generation, UsageRecord

    chunks = network_chunks(sse(image_frame(base64.b64encode(big_png(1200)).decode()))[0])
    fake_gemini["fake-gemini"].queue(Reply(200, chunks, content_type="text/event-stream",
                                           break_after=len(chunks) // 2))
    received = bytearray()
    path = f"/v1/models/{MODEL}:streamGenerateContent"
    with pytest.raises(httpx.RemoteProtocolError):
        async with streaming_client.stream("POST", path, json=BODY, headers={"x-delta-api-key": alice.secret}) as response:
            assert response.status_code == 200
            async for chunk in response.aiter_raw():
                received.extend(chunk)
    assert received.startswith(b'data: {"candidates"') and len(received) > 1_500_000
    assert b"\n\n" not in received  # no event was ever completed
    await recording.drain()
    generation = await Generation.objects.filter(user=alice.user).aget()
    assert generation.status == "failed"
    usage = await UsageRecord.objects.filter(user=alice.user).aget()
    assert usage.status_code >= 500 and usage.images == 0


async def test_a_big_frame_whose_model_name_comes_first_is_handed_on_whole(streaming_client, alice, fake_gemini):
    """A vendor that puts ``modelVersion`` before the picture: the frame is read whole, so the name
    is changed where it is, and the client gets the frame all the same."""
    png = big_png(1000)
    frame = image_frame(base64.b64encode(png).decode())
    first = orjson.dumps({"modelVersion": frame["modelVersion"], "candidates": frame["candidates"],
                          "usageMetadata": frame["usageMetadata"], "responseId": "r1"})
    fake_gemini["fake-gemini"].queue(Reply(200, network_chunks(b"data: " + first + b"\r\n\r\n"),
                                           content_type="text/event-stream"))
    path = f"/v1/models/{MODEL}:streamGenerateContent"
    async with streaming_client.stream("POST", path, json=BODY, headers={"x-delta-api-key": alice.secret}) as response:
        received = b"".join([chunk async for chunk in response.aiter_raw()])
    assert received == b"data: " + relayed_frame(first) + b"\n\n"
    await recording.drain()
    assert await stored_image(alice) == png
