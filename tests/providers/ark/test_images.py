"""The Ark Seedream adapter against a fake Ark at the HTTP boundary (reference §3)."""

from __future__ import annotations

import base64
import io

import orjson
import pytest
from PIL import Image

from studio.providers import http

pytestmark = pytest.mark.django_db(transaction=True)

BASE = "https://fake-ark.test/api/v3"


def tiny(colour=(200, 10, 10), fmt="JPEG") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (80, 40), colour).save(buffer, fmt)
    return buffer.getvalue()


class FakeArk:
    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []

    async def __call__(self, scope, receive, send) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        self.requests.append((scope["method"], scope["path"], headers, body))
        if scope["method"] == "GET":  # a result link
            await self._send(send, 200, "image/jpeg", tiny())
            return
        request = orjson.loads(body)
        layer = {"url": "https://fake-ark.test/api/v3/files/layer.png", "size": "80x40", "output_format": "jpeg",
                 "z_index": 1, "name": "Title", "description": "Big title",
                 "bounding_box": {"absolute": [1, 2, 30, 20], "normalized": [12, 50, 375, 500]}}
        failed = {"error": {"code": "OutputImageSensitiveContentDetected", "message": "sensitive"}}
        if request.get("stream"):
            lines = [
                ("image_generation.partial_succeeded", {"type": "image_generation.partial_succeeded",
                                                        "model": request["model"], "created": 1, "image_index": 0,
                                                        "url": layer["url"], "size": "80x40"}),
                ("image_generation.partial_failed", {"type": "image_generation.partial_failed",
                                                     "model": request["model"], "created": 1, "image_index": 1,
                                                     **failed}),
                ("image_generation.completed", {"type": "image_generation.completed", "model": request["model"],
                                                "created": 1, "usage": {"generated_images": 1, "output_tokens": 12,
                                                                        "total_tokens": 12}}),
            ]
            text = "".join(f"event: {n}\ndata: {orjson.dumps(p).decode()}\n\n" for n, p in lines) + "data: [DONE]\n\n"
            await self._send(send, 200, "text/event-stream", text.encode())
            return
        answer = {"model": request["model"], "created": 1757388756, "data": [layer, failed],
                  "usage": {"generated_images": 1, "output_tokens": 12, "total_tokens": 12, "input_images": 1}}
        await self._send(send, 200, "application/json", orjson.dumps(answer))

    @staticmethod
    async def _send(send, status, content_type, body) -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", content_type.encode())]})
        await send({"type": "http.response.body", "body": body})


@pytest.fixture
def fake_ark(catalog):
    import httpx

    from studio.models import Upstream

    fake = FakeArk()
    http.mount("https://fake-ark.test", httpx.ASGITransport(app=fake))
    upstream = Upstream(name="Fake Ark", protocol="ark", base_url=BASE, priority=10,
                        model_map={"sigma-5.0-image": "dola-seedream-5-0-pro-260628"})
    upstream.credential = "ark-vendor-key"
    upstream.save()
    yield fake
    http.unmount("https://fake-ark.test")


def auth(account) -> dict[str, str]:
    return {"Authorization": f"Bearer {account.secret}"}


async def test_extension_fields_pass_through_and_results_are_downloaded(client, alice, fake_ark):
    image = "data:image/png;base64," + base64.b64encode(tiny(fmt="PNG")).decode()
    body = {"model": "sigma-5.0-image", "prompt": "poster", "image": image, "size": "2K",
            "layer_decomposition": True, "sequential_image_generation": "disabled",
            "sequential_image_generation_options": {"max_images": 4}, "optimize_prompt_options": {"mode": "fast"},
            "watermark": False, "output_format": "png", "response_format": "b64_json", "tools": [{"type": "web_search"}]}
    response = await client.post("/v1/images/generations", json=body, headers=auth(alice))
    assert response.status_code == 200, response.text
    method, path, headers, sent = fake_ark.requests[0]
    assert (method, path) == ("POST", "/api/v3/images/generations")
    assert headers["authorization"] == "Bearer ark-vendor-key"
    assert orjson.loads(sent) == {**body, "model": "dola-seedream-5-0-pro-260628"}
    assert fake_ark.requests[1][:2] == ("GET", "/api/v3/files/layer.png")  # the result link was downloaded
    answer = response.json()
    layer, failed = answer["data"]
    assert base64.b64decode(layer["b64_json"]) == tiny()
    assert layer["bounding_box"] == {"absolute": [1, 2, 30, 20], "normalized": [12, 50, 375, 500]}
    assert (layer["z_index"], layer["name"], layer["description"]) == (1, "Title", "Big title")
    assert failed["error"]["code"] == "OutputImageSensitiveContentDetected"
    assert answer["usage"]["input_images"] == 1 and answer["model"] == "sigma-5.0-image"


async def test_stream_relays_success_failure_completed_done(client, alice, fake_ark):
    response = await client.post("/v1/images/generations", json={"model": "sigma-5.0-image", "prompt": "x",
                                                                  "stream": True}, headers=auth(alice))
    assert response.status_code == 200, response.text
    blocks = response.text.strip().split("\n\n")
    assert [b.split("\n")[0] for b in blocks] == [
        "event: image_generation.partial_succeeded", "event: image_generation.partial_failed",
        "event: image_generation.completed", "data: [DONE]"]
    first = orjson.loads(blocks[0].split("data: ", 1)[1])
    assert first["url"].startswith("http") and "/m/" in first["url"]  # re-hosted on the gateway


async def test_ark_error_body_is_rendered_in_the_openai_family(client, alice, fake_ark, monkeypatch):
    async def refuse(scope, receive, send):
        await receive()
        await FakeArk._send(send, 400, "application/json", orjson.dumps({"error": {
            "code": "InputTextSensitiveContentDetected", "message": "sensitive prompt", "param": "prompt",
            "type": "BadRequest"}}))

    monkeypatch.setattr(FakeArk, "__call__", lambda self, *a: refuse(*a))
    response = await client.post("/v1/images/generations", json={"model": "sigma-5.0-image", "prompt": "x"},
                                 headers=auth(alice))
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "InputTextSensitiveContentDetected" and error["param"] == "prompt"
