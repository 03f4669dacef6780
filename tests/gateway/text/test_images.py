"""Images in text requests are checked like the image routes' (a 400 naming the field)."""

from __future__ import annotations

import base64
import io

import orjson
import pytest
from PIL import Image

from studio.core.errors import BadRequest
from studio.gateway.text import images
from studio.gateway.text.images import check_images

SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(out, "PNG")
    return out.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


BAD_INLINE = {
    "bad base64": "!!!not base64!!!",
    "text posing as png": b64(b"hello, I am a PNG, honestly"),
    "svg": b64(SVG),
    "truncated png": b64(png()[:30]),
}


def chat(url: str) -> dict:
    return {"messages": [{"role": "user", "content": [{"type": "text", "text": "what?"},
                                                      {"type": "image_url", "image_url": {"url": url}}]}]}


def messages(data: str, media_type: str = "image/png") -> dict:
    block = {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
    return {"messages": [{"role": "user", "content": [block]}]}


def responses(url: str) -> dict:
    return {"input": [{"role": "user", "content": [{"type": "input_text", "text": "what?"},
                                                   {"type": "input_image", "image_url": url}]}]}


@pytest.mark.parametrize("data", BAD_INLINE.values(), ids=BAD_INLINE.keys())
def test_bad_inline_images_are_refused_naming_the_field(data):
    cases = [("chat", chat(f"data:image/png;base64,{data}"), "messages[0].content[1].image_url.url"),
             ("messages", messages(data), "messages[0].content[0].source.data"),
             ("responses", responses(f"data:image/png;base64,{data}"), "input[0].content[1].image_url")]
    for fmt, body, field in cases:
        with pytest.raises(BadRequest) as caught:
            check_images(fmt, body)
        assert caught.value.param == field, (fmt, caught.value)


def test_a_declared_type_that_does_not_match_the_bytes_is_refused():
    with pytest.raises(BadRequest) as caught:
        check_images("messages", messages(b64(png()), media_type="image/jpeg"))
    assert caught.value.param == "messages[0].content[0].source.data"


def test_images_inside_a_tool_result_are_checked():
    block = {"type": "tool_result", "tool_use_id": "t1",
             "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "%%%"}}]}
    with pytest.raises(BadRequest) as caught:
        check_images("messages", {"messages": [{"role": "user", "content": [block]}]})
    assert caught.value.param == "messages[0].content[0].content[0].source.data"


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://x.example/a.png", "javascript:alert(1)"])
def test_image_urls_must_be_http(url):
    with pytest.raises(BadRequest) as caught:
        check_images("chat", chat(url))
    assert caught.value.param == "messages[0].content[1].image_url.url"


def test_good_images_and_urls_pass():
    check_images("chat", chat(f"data:image/png;base64,{b64(png())}"))
    check_images("chat", chat("https://images.example/cat.png"))
    check_images("messages", messages(b64(png())))
    check_images("responses", responses(f"data:image/png;base64,{b64(png())}"))
    check_images("responses", responses("https://images.example/cat.png"))


BODIES = {"chat": chat, "messages": messages, "responses": responses}


@pytest.mark.parametrize("fmt", BODIES)
def test_with_the_raw_json_a_bad_image_is_refused_however_its_type_is_written(fmt):
    body = BODIES[fmt]("data:image/png;base64,!!!" if fmt != "messages" else "!!!not base64!!!")
    raw = orjson.dumps(body)
    with pytest.raises(BadRequest):
        check_images(fmt, body, raw)
    # The type name behind a \u escape (what a client's serialiser may write) is still found.
    mark = {"chat": b'"image_url"', "messages": b'"image"', "responses": b'"input_image"'}[fmt]
    escaped = raw.replace(mark, b'"\\u0069' + mark[2:])
    assert orjson.loads(escaped) == body and mark not in escaped
    with pytest.raises(BadRequest):
        check_images(fmt, body, escaped)


@pytest.mark.parametrize("fmt", BODIES)
def test_with_the_raw_json_a_body_without_images_is_not_walked(fmt, monkeypatch):
    walked = []
    monkeypatch.setitem(images._IMAGES, fmt, lambda body: walked.append(body) or iter(()))
    plain = {"messages": [{"role": "user", "content": "hello, café"}]}
    check_images(fmt, plain, orjson.dumps(plain))
    assert walked == []
    check_images(fmt, plain, orjson.dumps(plain, option=orjson.OPT_INDENT_2).replace(b"\xc3\xa9", b"\\u00e9"))
    assert len(walked) == 1  # an escape could hide the mark: walked
