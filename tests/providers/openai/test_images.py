"""The OpenAI Images adapter against a fake OpenAI at the HTTP boundary (reference §2)."""

from __future__ import annotations

import base64
import email.parser
import email.policy
import io

import orjson
import pytest
from PIL import Image

from studio.providers import http

pytestmark = pytest.mark.django_db(transaction=True)

BASE = "https://fake-openai.test/v1"


def tiny_png(colour=(1, 2, 3)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 64), colour).save(buffer, "PNG")
    return buffer.getvalue()


class FakeOpenAI:
    """Records each request; answers like the vendor (JSON, SSE events, or an error body)."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.requests: list[tuple[str, dict[str, str], bytes]] = []

    async def __call__(self, scope, receive, send) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        self.requests.append((scope["path"], headers, body))
        if self.status != 200:
            payload = {"error": {"message": "overloaded", "type": "server_error", "param": None, "code": None}}
            if self.status == 400:
                payload = {"error": {"message": "Your request was rejected by the safety system.",
                                     "type": "image_generation_user_error", "param": None,
                                     "code": "moderation_blocked"}}
            await self._send(send, self.status, "application/json", orjson.dumps(payload))
            return
        b64 = base64.b64encode(tiny_png()).decode()
        streaming = b'"stream":true' in body or b'name="stream"\r\n\r\ntrue' in body
        if streaming:
            prefix = "image_edit" if scope["path"].endswith("edits") else "image_generation"
            events = (
                f"event: {prefix}.partial_image\ndata: " + orjson.dumps({
                    "type": f"{prefix}.partial_image", "b64_json": b64, "partial_image_index": 0,
                    "size": "64x64", "quality": "low", "background": "opaque", "output_format": "png"}).decode()
                + f"\n\nevent: {prefix}.completed\ndata: " + orjson.dumps({
                    "type": f"{prefix}.completed", "b64_json": b64, "size": "64x64", "quality": "low",
                    "background": "opaque", "output_format": "png",
                    "usage": {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12}}).decode() + "\n\n"
            )
            await self._send(send, 200, "text/event-stream", events.encode())
            return
        answer = {"created": 1757000000, "background": "opaque", "output_format": "png", "quality": "high",
                  "size": "64x64", "data": [{"b64_json": b64, "revised_prompt": "revised"}],
                  "usage": {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12}}
        await self._send(send, 200, "application/json", orjson.dumps(answer))

    @staticmethod
    async def _send(send, status: int, content_type: str, body: bytes) -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", content_type.encode())]})
        await send({"type": "http.response.body", "body": body})


@pytest.fixture
def fake_openai(catalog):
    import httpx

    from studio.models import Upstream

    fake = FakeOpenAI()
    http.mount(BASE, httpx.ASGITransport(app=fake))
    upstream = Upstream(name="Fake OpenAI", protocol="openai", base_url=BASE, priority=10,
                        model_map={"kappa-image-1": "gpt-image-1.5"})
    upstream.credential = "sk-vendor-secret"
    upstream.save()
    yield fake
    http.unmount(BASE)


def auth(account) -> dict[str, str]:
    return {"Authorization": f"Bearer {account.secret}"}


async def test_generation_passes_every_field_and_reads_the_answer(client, alice, fake_openai):
    body = {"model": "kappa-image-1", "prompt": "a fox", "n": 1, "size": "1024x1024", "quality": "high",
            "moderation": "low", "style": "vivid", "user": "u-1", "output_format": "png", "vendor_extra": {"a": 1}}
    response = await client.post("/v1/images/generations", json=body, headers=auth(alice))
    assert response.status_code == 200, response.text
    path, headers, sent = fake_openai.requests[0]
    assert path == "/v1/images/generations"
    assert headers["authorization"] == "Bearer sk-vendor-secret"
    sent_body = orjson.loads(sent)
    assert sent_body == {**body, "model": "gpt-image-1.5"}  # unknown fields survive, only the model changes
    answer = response.json()
    assert answer["quality"] == "high" and answer["size"] == "64x64"
    assert answer["data"][0]["revised_prompt"] == "revised"
    assert answer["usage"]["total_tokens"] == 12


async def test_edit_goes_out_as_multipart_like_the_sdk(client, alice, fake_openai):
    data_uri = "data:image/png;base64," + base64.b64encode(tiny_png((9, 9, 9))).decode()
    response = await client.post("/v1/images/edits", json={
        "model": "kappa-image-1", "prompt": "warmer", "images": [{"image_url": data_uri}, {"image_url": data_uri}],
        "input_fidelity": "high", "n": 1}, headers=auth(alice))
    assert response.status_code == 200, response.text
    path, headers, sent = fake_openai.requests[0]
    assert path == "/v1/images/edits" and headers["content-type"].startswith("multipart/form-data")
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {headers['content-type']}\r\n\r\n".encode() + sent)
    parts = {}
    for part in message.iter_parts():
        parts.setdefault(part.get_param("name", header="content-disposition"), []).append(
            part.get_payload(decode=True))
    assert parts["model"] == [b"gpt-image-1.5"] and parts["input_fidelity"] == [b"high"]
    assert parts["image[]"] == [tiny_png((9, 9, 9))] * 2


def multipart_parts(headers: dict[str, str], sent: bytes) -> dict[str, list[bytes]]:
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {headers['content-type']}\r\n\r\n".encode() + sent)
    parts: dict[str, list[bytes]] = {}
    for part in message.iter_parts():
        parts.setdefault(part.get_param("name", header="content-disposition"), []).append(
            part.get_payload(decode=True))
    return parts


async def test_outpainting_backdrop_is_flattened_never_sent_as_background(client, alice, fake_openai):
    backdrop = io.BytesIO()
    Image.new("RGB", (200, 120), (10, 160, 60)).save(backdrop, "PNG")
    uri = "data:image/png;base64," + base64.b64encode(tiny_png((250, 20, 20))).decode()
    response = await client.post("/v1/images/edits", json={
        "model": "kappa-image-1", "prompt": "extend", "images": [{"image_url": uri}],
        "background": "data:image/png;base64," + base64.b64encode(backdrop.getvalue()).decode()},
        headers=auth(alice))
    assert response.status_code == 200, response.text
    _path, headers, sent = fake_openai.requests[0]
    parts = multipart_parts(headers, sent)
    assert "background" not in parts  # the vendor's background is transparent|opaque|auto only
    image = Image.open(io.BytesIO(parts["image"][0])).convert("RGB")
    mask = Image.open(io.BytesIO(parts["mask"][0]))
    assert image.size == mask.size == (200, 120)
    assert image.getpixel((100, 60)) == (250, 20, 20) and image.getpixel((2, 2)) == (10, 160, 60)
    alpha = mask.getchannel("A")
    assert alpha.getpixel((100, 60)) == 255 and alpha.getpixel((2, 2)) == 255  # source and backdrop kept
    assert alpha.getpixel((100 + 32 + 2, 60)) == 0  # just outside the source: the seam is blended


async def test_stream_events_are_relayed(client, alice, fake_openai):
    response = await client.post("/v1/images/generations", json={"model": "kappa-image-1", "prompt": "x",
                                                                  "stream": True, "partial_images": 1},
                                 headers=auth(alice))
    assert response.status_code == 200
    names = [line[7:] for line in response.text.split("\n") if line.startswith("event: ")]
    assert names == ["image_generation.partial_image", "image_generation.completed"]
    assert orjson.loads(fake_openai.requests[0][2])["stream"] is True


async def test_vendor_refusal_is_a_400_and_not_retried(client, alice, fake_openai):
    fake_openai.status = 400
    response = await client.post("/v1/images/generations", json={"model": "kappa-image-1", "prompt": "x"},
                                 headers=auth(alice))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "moderation_blocked"
    assert len(fake_openai.requests) == 1


async def test_vendor_outage_is_an_error_not_a_sandbox_picture(client, alice, fake_openai):
    fake_openai.status = 503
    response = await client.post("/v1/images/generations", json={"model": "kappa-image-1", "prompt": "x",
                                                                  "quality": "low"}, headers=auth(alice))
    assert response.status_code >= 500, response.text  # the sandbox never stands in for the vendor
    assert "data" not in response.json() and response.json()["error"]["message"]
    assert len(fake_openai.requests) == 1
