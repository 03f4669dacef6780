"""Input images of images requests: data URIs, raw base64, public URLs, uploads and file ids.

Every source ends as a ``SourceImage`` whose type was sniffed from the bytes and which Pillow
could open; refusals name the field (``images[1].image_url``, ``mask``, ``image``...). URLs are
fetched only through ``safe_fetch`` (public http(s), checked after DNS and on every redirect,
with size and time limits). A ``file_id`` names an Asset the caller may read; anyone else's is
a 404, as if it did not exist.
"""

from __future__ import annotations

import io
import uuid
from typing import Any

from asgiref.sync import sync_to_async
from PIL import Image

from studio.core.errors import BadRequest, NotFound
from studio.core.images import SourceImage
from studio.core.principal import Principal
from studio.gateway import recording
from studio.gateway.media.safe_fetch import check_url_syntax, fetch_public
from studio.gateway.media.validation import DEFAULT_MAX_BYTES, decode_inline_image, sniff_mime

MAX_PIXELS = 50_000_000
FETCH_TIMEOUT = 20.0
FILE_PREFIX = "file-"


def image_from_bytes(data: bytes, field: str, declared: str | None = None) -> SourceImage:
    """Validate raw bytes as an image: recognised type, opens in Pillow, sane pixel count."""
    if not data:
        raise BadRequest(f"{field} is empty", param=field, code="invalid_image")
    if len(data) > DEFAULT_MAX_BYTES:
        raise BadRequest(f"{field} is larger than {DEFAULT_MAX_BYTES // (1024 * 1024)} MB", param=field,
                         code="image_too_large")
    mime = sniff_mime(data)
    if mime is None or not mime.startswith("image/"):
        raise BadRequest(f"{field} is not a readable image (png, jpeg, webp, gif, bmp or tiff)", param=field,
                         code="invalid_image")
    try:
        with Image.open(io.BytesIO(data)) as picture:
            width, height = picture.size
            if width * height > MAX_PIXELS:
                raise BadRequest(f"{field} has too many pixels ({width}x{height})", param=field,
                                 code="image_too_large")
            picture.load()  # a truncated or corrupt file fails here, not at the vendor
    except BadRequest:
        raise
    except Exception:
        raise BadRequest(f"{field} could not be decoded as an image", param=field, code="invalid_image") from None
    return SourceImage(data=data, mime=mime, width=width, height=height, field=field)


async def from_string(value: str, field: str, principal: Principal) -> SourceImage:
    value = value.strip()
    if value.startswith("data:"):
        decoded = decode_inline_image(value, None, field=field, allow_data_uri=True, max_pixels=MAX_PIXELS)
        return image_from_bytes(decoded.data, field)
    if value.startswith(FILE_PREFIX):
        return await from_file_id(value, field, principal)
    if "://" in value[:16] or value.startswith("//"):
        check_url_syntax(value, field=field)  # refuses other schemes with a clear message
        fetched = await fetch_public(value, field=field, max_bytes=DEFAULT_MAX_BYTES, timeout=FETCH_TIMEOUT,
                                     accept="image/*")
        return image_from_bytes(fetched.data, field)
    decoded = decode_inline_image(value, None, field=field, max_pixels=MAX_PIXELS)
    return image_from_bytes(decoded.data, field)


async def resolve(value: Any, field: str, principal: Principal) -> SourceImage:
    """One image source as clients send it: a string, or ``{image_url}`` / ``{file_id}`` / ``{url}``."""
    if isinstance(value, str) and value:
        return await from_string(value, field, principal)
    if isinstance(value, dict):
        if isinstance(value.get("file_id"), str) and value["file_id"]:
            return await from_file_id(value["file_id"], f"{field}.file_id", principal)
        for key in ("image_url", "url", "b64_json"):
            inner = value.get(key)
            if isinstance(inner, dict):  # {"image_url": {"url": ...}} as in chat content parts
                inner = inner.get("url")
            if isinstance(inner, str) and inner:
                return await from_string(inner, f"{field}.{key}", principal)
    raise BadRequest(f"{field} must be an image URL, a base64 image, or an object with 'image_url' or 'file_id'",
                     param=field, code="invalid_image")


def parse_file_id(file_id: str) -> uuid.UUID | None:
    raw = file_id[len(FILE_PREFIX):] if file_id.startswith(FILE_PREFIX) else file_id
    try:
        return uuid.UUID(raw)
    except ValueError:
        return None


def _read_asset(asset_id: uuid.UUID, principal: Principal) -> tuple[bytes, str] | None:
    from django.db.models import Q

    from studio.models import Asset, Visibility

    readable = Q(owner_id=principal.user_id)
    if principal.team_id is not None:
        readable |= Q(team_id=principal.team_id, visibility__in=[Visibility.TEAM, Visibility.LINK])
    asset = Asset.objects.filter(readable, id=asset_id, kind="image").first()
    if asset is None:
        return None
    with asset.file.open("rb") as handle:
        return handle.read(), asset.mime


async def from_file_id(file_id: str, field: str, principal: Principal) -> SourceImage:
    """A stored image the caller may read (a DB read: only requests naming a file pay for it)."""
    asset_id = parse_file_id(file_id)
    found = await sync_to_async(_read_asset)(asset_id, principal) if asset_id else None
    if found is None and asset_id is not None:
        await recording.drain()  # an upload or output of this process may still be on its way to the DB
        found = await sync_to_async(_read_asset)(asset_id, principal)
    if found is None:
        raise NotFound(f"no file with id '{file_id}' ({field})", param=field, code="file_not_found")
    image = image_from_bytes(found[0], field)
    image.asset_id = asset_id
    return image


def check_mask(image: SourceImage, mask: SourceImage) -> None:
    if (mask.width, mask.height) != (image.width, image.height):
        raise BadRequest(f"the mask is {mask.width}x{mask.height} but the image is {image.width}x{image.height}; "
                         "they must be the same size", param="mask", code="invalid_mask_size")
    if mask.mime != "image/png":
        raise BadRequest("the mask must be a PNG (its alpha channel marks the area to edit)", param="mask",
                         code="invalid_mask")
