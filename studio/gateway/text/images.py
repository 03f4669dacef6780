"""Images inside text requests, checked like the image routes check theirs.

Chat ``image_url`` parts, messages ``image`` blocks (also inside a ``tool_result``) and
responses ``input_image`` parts: inline data must be base64 of a raster image whose bytes match
its declared type, within the byte and pixel limits; anything else (bad base64, text posing as a
PNG, SVG) is a 400 naming the field before any upstream call. URLs must be plain http(s) URLs;
they are passed on, never fetched by the gateway.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from studio.core.errors import BadRequest
from studio.gateway.media.url_safety import check_url_syntax
from studio.gateway.media.validation import decode_inline_image

# (the value, the field that names it, the declared MIME type or None, whether it is base64 alone)
ImageRef = tuple[Any, str, str | None, bool]


def check_images(fmt: str, body: dict[str, Any], raw: bytes | None = None) -> None:
    """Validate every image of a text request of format ``fmt`` (``chat``, ``messages``, ``responses``).

    With the request's ``raw`` JSON, a body in which the type that marks an image of its format
    is not written anywhere is not walked: the type name can only be in the JSON as it is or
    behind a ``\\u`` escape (the other escapes stand for characters no type name holds)."""
    if raw is not None and _MARKS[fmt] not in raw and b"\\u" not in raw:
        return
    for value, field, declared, bare in _IMAGES[fmt](body):
        check_image(value, field, declared, bare=bare)


def check_image(value: Any, field: str, declared: str | None, *, bare: bool) -> None:
    if not isinstance(value, str) or not value:
        raise BadRequest(f"'{field}' must be a non-empty string", param=field)
    if bare:
        decode_inline_image(value, declared, field=field)
    elif value.startswith("data:"):
        decode_inline_image(value, None, field=field, allow_data_uri=True)
    else:
        check_url_syntax(value, field=field)


def _parts(content: Any, field: str) -> Iterator[tuple[dict[str, Any], str]]:
    if isinstance(content, list):
        for i, part in enumerate(content):
            if isinstance(part, dict):
                yield part, f"{field}[{i}]"


def _chat(body: dict[str, Any]) -> Iterator[ImageRef]:
    for i, message in enumerate(body.get("messages") or ()):
        if not isinstance(message, dict):
            continue
        for part, field in _parts(message.get("content"), f"messages[{i}].content"):
            if part.get("type") != "image_url":
                continue
            image = part.get("image_url")
            if isinstance(image, dict):
                yield image.get("url"), f"{field}.image_url.url", None, False
            else:
                yield image, f"{field}.image_url", None, False


def _message_blocks(content: Any, field: str) -> Iterator[ImageRef]:
    for block, name in _parts(content, field):
        if block.get("type") == "tool_result":
            yield from _message_blocks(block.get("content"), f"{name}.content")
        if block.get("type") != "image" or not isinstance(block.get("source"), dict):
            continue
        source = block["source"]
        if source.get("type") == "base64":
            media_type = source.get("media_type")
            yield source.get("data"), f"{name}.source.data", media_type if isinstance(media_type, str) else None, True
        elif source.get("type") == "url":
            yield source.get("url"), f"{name}.source.url", None, False


def _messages(body: dict[str, Any]) -> Iterator[ImageRef]:
    for i, message in enumerate(body.get("messages") or ()):
        if isinstance(message, dict):
            yield from _message_blocks(message.get("content"), f"messages[{i}].content")


def _responses(body: dict[str, Any]) -> Iterator[ImageRef]:
    items = body.get("input")
    for item, field in _parts(items, "input"):
        for part, name in _parts(item.get("content"), f"{field}.content"):
            if part.get("type") == "input_image" and part.get("image_url") is not None:
                yield part.get("image_url"), f"{name}.image_url", None, False


_IMAGES = {"chat": _chat, "messages": _messages, "count_tokens": _messages, "responses": _responses}
# The type each format's image parts name (a block of the messages format: ``"type": "image"``).
_MARKS = {"chat": b'"image_url"', "messages": b'"image"', "count_tokens": b'"image"', "responses": b'"input_image"'}
