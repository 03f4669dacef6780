"""POST /v1/images/edits (JSON and multipart) and POST /v1/files."""

from __future__ import annotations

import base64
import io

import orjson
import pytest
from PIL import Image, ImageDraw

from studio.gateway import recording

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/v1/images/edits"


def auth(account) -> dict[str, str]:
    return {"Authorization": f"Bearer {account.secret}"}


def png(size=(256, 256), colour=(40, 120, 200), mode="RGB") -> bytes:
    image = Image.new(mode, size, colour)
    ImageDraw.Draw(image).rectangle((20, 20, 80, 80), fill=(250, 200, 0))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def mask_png(size=(256, 256), hole=(128, 128, 256, 256)) -> bytes:
    mask = Image.new("RGBA", size, (0, 0, 0, 255))
    ImageDraw.Draw(mask).rectangle((hole[0], hole[1], hole[2] - 1, hole[3] - 1), fill=(0, 0, 0, 0))
    buffer = io.BytesIO()
    mask.save(buffer, "PNG")
    return buffer.getvalue()


def data_uri(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()


def picture(b64: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(b64))).convert("RGB")


async def test_multipart_inpaint_changes_only_the_masked_area(client, alice):
    source = png()
    response = await client.post(URL, data={"model": "kappa-image-1", "prompt": "a bright sun"},
                                 files=[("image", ("a.png", source, "image/png")),
                                        ("mask", ("m.png", mask_png(), "image/png"))], headers=auth(alice))
    assert response.status_code == 200, response.text
    result = picture(response.json()["data"][0]["b64_json"])
    original = Image.open(io.BytesIO(source)).convert("RGB")
    assert result.size == original.size
    assert result.crop((0, 0, 128, 256)).tobytes() == original.crop((0, 0, 128, 256)).tobytes()
    assert result.crop((128, 128, 256, 256)).tobytes() != original.crop((128, 128, 256, 256)).tobytes()


async def test_json_outpaint_onto_background_image(client, alice):
    background = png((512, 384), (10, 160, 60))
    response = await client.post(URL, json={"model": "kappa-image-1", "prompt": "extend the scene",
                                             "images": [{"image_url": data_uri(png((200, 200)))}],
                                             "background": data_uri(background)}, headers=auth(alice))
    assert response.status_code == 200, response.text
    result = picture(response.json()["data"][0]["b64_json"])
    assert result.size == (512, 384)
    assert result.getpixel((2, 2)) == (10, 160, 60)  # the corner comes from the background


async def test_multipart_several_images_and_stream_edit_events(client, alice):
    files = [("image[]", (f"{i}.png", png(colour=(i * 80, 50, 90)), "image/png")) for i in range(2)]
    response = await client.post(URL, data={"model": "kappa-image-1", "prompt": "put them together",
                                            "stream": "true", "partial_images": "1"}, files=files,
                                 headers=auth(alice))
    assert response.status_code == 200, response.text
    names = [line[7:] for line in response.text.split("\n") if line.startswith("event: ")]
    assert names == ["image_edit.partial_image", "image_edit.completed"]


async def test_files_upload_then_edit_by_file_id_and_records_inputs(client, alice):
    from studio.models import Asset, Generation

    source = png()
    uploaded = await client.post("/v1/files", data={"purpose": "vision"},
                                 files={"file": ("photo.png", source, "image/png")}, headers=auth(alice))
    assert uploaded.status_code == 200, uploaded.text
    file = uploaded.json()
    assert file["object"] == "file" and file["bytes"] == len(source) and file["filename"] == "photo.png"
    assert file["purpose"] == "vision" and file["id"].startswith("file-") and file["created_at"] > 0
    again = await client.post("/v1/files", data={"purpose": "vision"},
                              files={"file": ("same.png", source, "image/png")}, headers=auth(alice))
    assert again.json()["id"] == file["id"]  # deduplicated by content

    response = await client.post(URL, json={"model": "kappa-image-1", "prompt": "make it warmer",
                                             "images": [{"file_id": file["id"]}],
                                             "mask": {"image_url": data_uri(mask_png())}}, headers=auth(alice))
    assert response.status_code == 200, response.text
    await recording.drain()
    generation = await Generation.objects.aget(user=alice.user, route="images.edits")
    assert generation.status == "succeeded"
    inputs = [a async for a in Asset.objects.filter(owner=alice.user, is_input=True)]
    assert len(inputs) == 2  # the uploaded image (reused, not copied) and the mask
    roles = sorted(use["role"] for a in inputs for use in a.metadata.get("input_of", []))
    assert roles == ["image", "mask"]
    assert await Asset.objects.filter(generation=generation, is_input=False).acount() == 1


async def test_edit_of_an_output_by_file_id_links_the_parent(client, alice):
    from studio.models import Asset, Generation

    first = await client.post("/v1/images/generations", json={"model": "kappa-image-1", "prompt": "a cat"},
                              headers=auth(alice))
    assert first.status_code == 200
    await recording.drain()
    output = await Asset.objects.aget(owner=alice.user, is_input=False)
    response = await client.post(URL, json={"model": "kappa-image-1", "prompt": "make it night",
                                             "images": [{"file_id": f"file-{output.id.hex}"}]}, headers=auth(alice))
    assert response.status_code == 200, response.text
    await recording.drain()
    edit = await Generation.objects.aget(user=alice.user, route="images.edits")
    assert edit.parent_id == output.generation_id


async def test_someone_elses_file_is_not_found(client, alice, make_account):
    bob = make_account("bob")
    uploaded = await client.post("/v1/files", data={"purpose": "vision"},
                                 files={"file": ("p.png", png(), "image/png")}, headers=auth(bob))
    response = await client.post(URL, json={"model": "kappa-image-1", "prompt": "x",
                                             "images": [{"file_id": uploaded.json()["id"]}]}, headers=auth(alice))
    assert response.status_code == 404
    assert response.json()["error"]["param"] == "images[0].file_id"


async def test_native_model_edit_sends_image_parts(client, alice):
    response = await client.post(URL, json={"model": "delta-3.1-flash-image", "prompt": "make it black and white",
                                             "images": [{"image_url": data_uri(png((512, 512), (200, 30, 30)))}]},
                                 headers=auth(alice))
    assert response.status_code == 200, response.text
    result = picture(response.json()["data"][0]["b64_json"])
    r, g, b = result.getpixel((300, 300))
    assert abs(r - g) < 12 and abs(g - b) < 12  # the red input came back grey: the edit used the image


@pytest.mark.parametrize(("body", "param"), [
    ({"prompt": "x", "images": [{"image_url": "data:image/png;base64,bm90IGFuIGltYWdl"}]}, "images[0].image_url"),
    ({"prompt": "x", "images": [{"image_url": "ftp://example.com/a.png"}]}, "images[0].image_url"),
    ({"prompt": "x", "images": [{"image_url": "http://127.0.0.1/a.png"}]}, "images[0].image_url"),
    ({"prompt": "x", "images": [{"image_url": "http://169.254.169.254/latest/meta-data"}]}, "images[0].image_url"),
    ({"prompt": "x", "images": [{"image_url": "http://10.0.0.7/a.png"}]}, "images[0].image_url"),
    ({"prompt": "x", "images": []}, "images"),
    ({"images": [{"image_url": "data:image/png;base64,AAAA"}]}, "prompt"),
])
async def test_bad_edit_input_names_the_field(client, alice, body, param):
    response = await client.post(URL, json={"model": "kappa-image-1", **body}, headers=auth(alice))
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["param"] == param and error["type"] == "invalid_request_error" and error["message"]


async def test_mask_of_another_size_is_refused(client, alice):
    response = await client.post(URL, data={"model": "kappa-image-1", "prompt": "x"},
                                 files=[("image", ("a.png", png(), "image/png")),
                                        ("mask", ("m.png", mask_png((128, 128), (0, 0, 64, 64)), "image/png"))],
                                 headers=auth(alice))
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "mask"


async def test_unreadable_upload_is_refused(client, alice):
    response = await client.post(URL, data={"model": "kappa-image-1", "prompt": "x"},
                                 files=[("image", ("a.png", png()[:60], "image/png"))], headers=auth(alice))
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "image"


async def test_files_refuses_a_nul_in_the_purpose(client, alice):
    from studio.models import Asset

    response = await client.post("/v1/files", data={"purpose": "vi\x00sion"},
                                 files={"file": ("a.png", png(), "image/png")}, headers=auth(alice))
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["param"] == "purpose" and "NUL" in error["message"] and error["type"] == "invalid_request_error"
    assert not await Asset.objects.filter(owner=alice.user).aexists()


async def test_files_refuses_non_images_and_missing_purpose(client, alice):
    text = await client.post("/v1/files", data={"purpose": "vision"}, files={"file": ("a.txt", b"hello", "text/plain")},
                             headers=auth(alice))
    assert text.status_code == 400 and text.json()["error"]["param"] == "file"
    missing = await client.post("/v1/files", files={"file": ("a.png", png(), "image/png")}, headers=auth(alice))
    assert missing.status_code == 400 and missing.json()["error"]["param"] == "purpose"


async def test_url_image_is_fetched_from_a_public_server(client, alice, settings):
    """The success path of URL inputs, with a loopback server standing in for a public host."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    body = png((300, 200))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's naming)
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.STUDIO_FETCH_ALLOW_PRIVATE = True
    try:
        response = await client.post(URL, json={
            "model": "kappa-image-1", "prompt": "sepia",
            "images": [{"image_url": f"http://127.0.0.1:{server.server_port}/photo.png"}]}, headers=auth(alice))
    finally:
        server.shutdown()
    assert response.status_code == 200, response.text
    assert picture(response.json()["data"][0]["b64_json"]).size == (300, 200)
    assert orjson.loads(response.content)["size"] == "300x200"
