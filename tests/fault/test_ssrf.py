"""SSRF: every URL field of /v1 against a table of address forms; a loopback listener must see no hit.

URLs the gateway fetches (image inputs of the images routes) must be refused with a 400 naming the
field; URLs it passes on to the upstream (text images, native fileUri, video frames) must not be
fetched by the gateway; client callbacks to private addresses are refused at creation.
"""

from __future__ import annotations

import base64
import http.server
import io
import threading

import pytest
from PIL import Image

from studio.gateway.media import url_safety
from tests.fault import tally
from tests.fault.conftest import family_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.fault]

FORMS = [
    "http://127.0.0.1:{port}/a.png", "http://localhost:{port}/a.png", "http://[::1]:{port}/a.png",
    "http://2130706433:{port}/a.png", "http://0177.0.0.1:{port}/a.png", "http://0x7f.0.0.1:{port}/a.png",
    "http://0x7f000001:{port}/a.png", "http://127.1:{port}/a.png", "http://[::ffff:127.0.0.1]:{port}/a.png",
    "http://[::ffff:7f00:1]:{port}/a.png", "http://0.0.0.0:{port}/a.png", "http://169.254.169.254/latest/meta-data/",
    "http://[::ffff:a9fe:a9fe]/latest", "http://10.0.0.1:{port}/a.png", "http://192.168.0.1:{port}/a.png",
    "http://172.16.0.1:{port}/a.png", "http://[fe80::1]:{port}/a.png", "http://metadata.google.internal/",
    "http://127.0.0.1.:{port}/a.png", "{redirect}",
]
def _png_data_url() -> str:
    out = io.BytesIO()
    Image.new("RGBA", (8, 8), "red").save(out, "PNG")
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()


PNG_DATA_URL = _png_data_url()
FETCHED = "fetched"  # the gateway fetches it: a 400 naming the field is expected
PASSED = "passed on"  # the upstream's to fetch: any 2xx/4xx, but never a hit from the gateway
REFUSED = "refused"  # a client callback: a 400 at creation


def _fields(url: str) -> list[tuple[str, str, dict, str]]:
    ark_image = {"type": "image_url", "image_url": {"url": url}}
    return [
        ("/v1/images/edits", "images[0]", {"model": "kappa-image-1", "prompt": "a hat",
                                           "images": [{"image_url": url}]}, FETCHED),
        ("/v1/images/edits", "mask", {"model": "kappa-image-1", "prompt": "a hat",
                                      "images": [{"image_url": PNG_DATA_URL}], "mask": {"image_url": url}}, FETCHED),
        ("/v1/models/delta-3.1-flash-image:generateContent", "fileUri", {"contents": [{"parts": [
            {"text": "describe"}, {"fileData": {"mimeType": "image/png", "fileUri": url}}]}]}, PASSED),
        ("/v1/chat/completions", "image_url", {"model": "omicron-4-mini", "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": url}}]}]}, PASSED),
        ("/v1/messages", "source.url", {"model": "omicron-4-mini", "max_tokens": 8, "messages": [
            {"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": url}}]}]}, PASSED),
        ("/v1/responses", "image_url", {"model": "omicron-4-mini", "input": [{"role": "user", "content": [
            {"type": "input_image", "image_url": url}]}]}, PASSED),
        ("/v1/alpha/video/generations", "first_frame", {"model": "alpha-2.0-fast", "content": [
            {"type": "text", "text": "tide"}, {**ark_image, "role": "first_frame"}]}, PASSED),
        ("/v1/alpha/video/generations", "last_frame", {"model": "alpha-2.0-fast", "content": [
            {"type": "text", "text": "tide"}, {"type": "image_url", "image_url": {"url": "https://img.example/f.png"},
                                               "role": "first_frame"}, {**ark_image, "role": "last_frame"}]}, PASSED),
        ("/v1/video/generations", "medias[0]", {"model": "alpha-2.0-fast", "prompt": "tide", "medias": [
            {"type": "image", "url": url, "role": "first_frame"}]}, PASSED),
        *_dashscope_fields(url),
        ("/v1/alpha/video/generations", "callback_url", {"model": "alpha-2.0-fast", "content": [
            {"type": "text", "text": "tide"}], "callback_url": url}, REFUSED),
        ("/v1/video/generations", "callback_url", {"model": "alpha-2.0-fast", "prompt": "tide",
                                                   "callback_url": url}, REFUSED),
    ]


def _dashscope_fields(url: str) -> list[tuple[str, str, dict, str]]:
    """Protocol B's create body: every media type of ``input.media``, and ``input.audio_url``."""
    path = "/v1/beta/video/generations"
    frame = {"type": "first_frame", "url": "https://img.example/f.png"}
    rows = [(name, {"model": model, "input": {"prompt": "tide", "media": [*before, {"type": kind, "url": url}]}})
            for name, model, before, kind in (
                ("input.media[0].url first_frame", "beta3.0-video", [], "first_frame"),
                ("input.media[1].url last_frame", "beta3.0-video", [frame], "last_frame"),
                ("input.media[0].url reference_image", "beta3.0-video", [], "reference_image"),
                ("input.media[0].url reference_video", "beta3.0-video", [], "reference_video"),
                ("input.media[0].url reference_audio", "beta3.0-video", [], "reference_audio"),
                ("input.media[0].url link", "beta3.0-video", [], "link"),
                ("input.media[0].url file", "beta3.0-video", [], "file"),
                ("input.media[1].url driving_audio", "beta2.7-i2v", [frame], "driving_audio"),
                ("input.media[0].url video", "beta2.7-videoedit", [], "video"))]
    rows.append(("input.audio_url", {"model": "beta2.7-t2v", "input": {"prompt": "tide", "audio_url": url}}))
    return [(path, name, body, PASSED) for name, body in rows]


class Redirector:
    """A server on 127.0.0.2 (treated as public in this test) that redirects to the listener."""

    def __init__(self, target: str) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def _go(self) -> None:
                self.send_response(302)
                self.send_header("Location", target)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_HEAD = _go

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.2", 0), Handler)
        self.url = f"http://127.0.0.2:{self.server.server_port}/r.png"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def redirector(listener, monkeypatch, settings):
    settings.STUDIO_FETCH_ALLOW_PRIVATE = False
    real = url_safety.is_public_address
    monkeypatch.setattr(url_safety, "is_public_address", lambda ip: str(ip) == "127.0.0.2" or real(ip))
    server = Redirector(f"http://127.0.0.1:{listener.port}/after-redirect.png")
    yield server
    server.close()


# Fields passed on are never fetched by the gateway whatever the address: a few forms suffice.
PASSED_ON_FORMS = (FORMS[0], FORMS[3], FORMS[-1])


@pytest.mark.parametrize("form", FORMS)
async def test_no_url_field_reaches_a_private_address(client, alice, listener, redirector, form):
    url = form.format(port=listener.port, redirect=redirector.url)
    failures = []
    for path, name, body, expectation in _fields(url):
        if expectation == PASSED and form not in PASSED_ON_FORMS:
            continue
        if expectation == REFUSED and form == "{redirect}":
            expectation = PASSED  # a public name is accepted; its redirect is never followed at delivery
        response = await client.post(path, json=body, headers={"Authorization": f"Bearer {alice.secret}",
                                                               "x-api-key": alice.secret})
        tally.add("SSRF attempts")
        tally.add("requests tried")
        if response.status_code >= 500:
            tally.add("unexpected 5xx")
            failures.append(f"{path} {name}: {response.status_code} {response.text[:200]}")
        elif expectation in (FETCHED, REFUSED) and response.status_code != 400:
            failures.append(f"{path} {name}: expected a 400, got {response.status_code} {response.text[:200]}")
        elif expectation in (FETCHED, REFUSED) and family_of(path) == "openai":
            assert response.json()["error"]["param"].startswith(name.split(".")[0]), response.text
    from studio.gateway.video import webhooks

    await webhooks.drain(timeout=2)
    assert listener.hits == [], listener.hits
    assert not failures, "\n".join(failures)
