"""Validation of media that clients send inline (base64 strings and ``data:`` URIs).

Every route that accepts images, video, audio or documents goes through here, so that a bad
upload is refused with a 400 that names the offending field *before* it costs an upstream
call — and so that what we forward is what we claim it is: the declared MIME type is checked
against the bytes (vendors reject mismatches with unhelpful errors, or worse, misread them),
images are opened by Pillow to read their size and catch corrupt/truncated files, and pixel
and byte limits stop decompression bombs and oversized payloads early.

The functions raise the engine's typed errors (``BadRequest`` with ``param`` set to the field,
``PayloadTooLarge``) so every inbound API family renders them in its own error format.

The pieces live in focused modules and are re-exported here, the one entry point routes use:
:mod:`~studio.gateway.media.sniff` (magic bytes, MIME names) and
:mod:`~studio.gateway.media.inline` (base64 and ``data:`` URIs); this module holds the rules
that combine them and the image inspection.
"""

from __future__ import annotations

import io
from collections.abc import Collection
from dataclasses import dataclass
from dataclasses import field as dataclass_field

from studio.core.errors import BadRequest
from studio.gateway.media.inline import decode_base64, parse_data_uri, split_inline_input
from studio.gateway.media.sniff import (
    SAME_CONTAINER_OTHER_KIND,
    VALID_MIME_RE,
    media_kind,
    mime_matches,
    normalize_mime,
    sniff_mime,
)

__all__ = [
    "DecodedMedia",
    "decode_base64",
    "decode_inline_image",
    "decode_media",
    "media_kind",
    "mime_matches",
    "normalize_mime",
    "parse_data_uri",
    "sniff_mime",
]

DEFAULT_MAX_BYTES = 20 * 1024 * 1024
DEFAULT_MAX_PIXELS = 100_000_000


@dataclass(frozen=True, slots=True)
class DecodedMedia:
    """Decoded, validated media. ``mime`` is canonical (``image/jpeg``, never ``image/jpg``)."""

    # repr=False: the payload can be megabytes and must never end up in logs or tracebacks.
    data: bytes = dataclass_field(repr=False)
    mime: str
    width: int | None = None
    height: int | None = None

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def kind(self) -> str:
        """``image``, ``video``, ``audio`` or ``document``."""
        return media_kind(self.mime)


# --------------------------------------------------------------------------------------------
# Images
# --------------------------------------------------------------------------------------------

# Pillow format names per canonical MIME type; opening with ``formats=`` stops Pillow from
# trying every other parser on bytes we have already identified. MPO is a multi-picture JPEG.
_PIL_FORMATS: dict[str, tuple[str, ...]] = {
    "image/png": ("PNG",),
    "image/jpeg": ("JPEG", "MPO"),
    "image/gif": ("GIF",),
    "image/webp": ("WEBP",),
    "image/bmp": ("BMP", "DIB"),
    "image/tiff": ("TIFF",),
    "image/avif": ("AVIF",),
    "image/heic": ("HEIF",),
    "image/heif": ("HEIF",),
}


def _pillow_can_open(mime: str) -> bool:
    from PIL import Image

    Image.init()
    return any(name in Image.OPEN for name in _PIL_FORMATS.get(mime, ()))


def _heif_dimensions(data: bytes) -> tuple[int, int] | None:
    """Width/height from the ``ispe`` properties of a HEIF/HEIC/AVIF when Pillow cannot read it.

    Best effort: the largest ``ispe`` in the metadata (a grid image lists its tiles and the full
    canvas). The ``meta`` box sits near the start, so only the head of the file is scanned.
    """
    best: tuple[int, int] | None = None
    head = data[: 256 * 1024]
    start = 0
    while (i := head.find(b"ispe", start)) >= 4:
        start = i + 4
        if int.from_bytes(head[i - 4 : i], "big") != 20 or len(head) < i + 16:
            continue
        w = int.from_bytes(head[i + 8 : i + 12], "big")
        h = int.from_bytes(head[i + 12 : i + 16], "big")
        if w and h and (best is None or w * h > best[0] * best[1]):
            best = (w, h)
    return best


def _looks_truncated(data: bytes, mime: str) -> bool:
    """Cheap end-of-container checks for formats whose Pillow ``verify()`` reads nothing.

    A positive only triggers a full decode, which has the final word — some writers append
    junk or omit trailers and real viewers still show the image.
    """
    if mime == "image/jpeg":
        return not data.rstrip(b"\x00\r\n ").endswith(b"\xff\xd9")
    if mime == "image/gif":
        return not data.rstrip(b"\x00").endswith(b"\x3b")
    if mime == "image/webp":
        return int.from_bytes(data[4:8], "little") + 8 > len(data)
    if mime == "image/bmp":
        return int.from_bytes(data[2:6], "little") > len(data)
    return False


def _check_pixels(field: str, width: int, height: int, max_pixels: int) -> None:
    if width <= 0 or height <= 0:
        raise BadRequest(
            f"{field} has an invalid image size {width}x{height}", param=field, code="invalid_image"
        )
    if width * height > max_pixels:
        raise BadRequest(
            f"{field} is {width}x{height} = {width * height} pixels; at most {max_pixels} are accepted",
            param=field,
            code="image_too_large",
            details={"width": width, "height": height, "max_pixels": max_pixels},
        )


def _inspect_image(data: bytes, mime: str, *, field: str, max_pixels: int) -> tuple[int | None, int | None]:
    """Read the size from the header, enforce the pixel limit, and check integrity.

    Pixels are only decoded when a cheap check suggests truncation, and then only after the
    pixel limit has passed — a small file cannot make us allocate a huge bitmap.
    """
    from PIL import Image

    if not _pillow_can_open(mime):
        # No decoder installed for this format (HEIC without a plugin): forward it unverified but
        # still enforce the pixel limit from the container metadata when it is readable.
        dims = _heif_dimensions(data) if mime in ("image/heic", "image/heif", "image/avif") else None
        if dims is None:
            return None, None
        _check_pixels(field, *dims, max_pixels)
        return dims

    corrupt = BadRequest(
        f"{field} is not a valid {mime} image: the file is corrupt or truncated",
        param=field,
        code="invalid_image",
    )
    formats = list(_PIL_FORMATS[mime])
    try:
        with Image.open(io.BytesIO(data), formats=formats) as im:
            width, height = im.size
            _check_pixels(field, width, height, max_pixels)
            im.verify()
        if _looks_truncated(data, mime):
            with Image.open(io.BytesIO(data), formats=formats) as im:
                im.load()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        # Pillow's own process-wide guard (Image.MAX_IMAGE_PIXELS) fired before ours could — the
        # warning only arrives as an exception when warnings are configured as errors.
        raise BadRequest(
            f"{field} has too many pixels (possible decompression bomb); at most {max_pixels} are accepted",
            param=field,
            code="image_too_large",
        ) from None
    except BadRequest:
        raise
    except Exception:  # Pillow signals corruption with OSError, SyntaxError, ValueError, EOFError...
        raise corrupt from None
    return width, height


def _declared_check(declared: str | None, *, field: str, allowed: Collection[str], what: str) -> str | None:
    if declared is None or not declared.strip():
        return None
    canonical = normalize_mime(declared)
    if not VALID_MIME_RE.match(canonical):
        raise BadRequest(
            f"{field}: {declared!r} is not a valid MIME type", param=field, code="invalid_mime_type"
        )
    if media_kind(canonical) not in allowed:
        raise BadRequest(
            f"{field}: declared MIME type {declared!r} is not {what}",
            param=field,
            code="unsupported_media_type",
        )
    return canonical


def decode_inline_image(
    data: str,
    mime_type: str | None,
    *,
    field: str,
    allow_data_uri: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    verify: bool = True,
) -> DecodedMedia:
    """Decode and validate an inline image (base64, or a ``data:`` URI when allowed).

    ``mime_type`` is what the client declared (``None``: trust the bytes). The bytes must be
    a recognised raster image whose type matches the declaration. With ``verify`` Pillow reads
    the header for width/height (enforcing ``max_pixels``) and checks integrity; without it
    no image parser runs and ``width``/``height`` are ``None``.
    """
    return decode_media(
        data,
        mime_type,
        field=field,
        allowed_kinds=("image",),
        allow_data_uri=allow_data_uri,
        max_bytes=max_bytes,
        max_pixels=max_pixels,
        verify=verify,
    )


_KIND_WORDS = {"image": "an image", "video": "a video", "audio": "audio", "document": "a document"}


def _describe_kinds(kinds: Collection[str]) -> str:
    words = [_KIND_WORDS.get(k, k) for k in sorted(kinds)]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def decode_media(
    data: str,
    mime_type: str | None,
    *,
    field: str,
    allowed_kinds: Collection[str] = ("image", "video", "audio"),
    allow_data_uri: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    verify: bool = True,
) -> DecodedMedia:
    """Decode and validate inline media of the given kinds (image, video, audio, document).

    The same rules as :func:`decode_inline_image`; images are also inspected by Pillow (with
    ``verify``), other media only sniffed — their dimensions are ``None``. When the container
    is ambiguous (an MP4 or WebM may hold only audio) the declared kind is believed.
    """
    allowed = frozenset(allowed_kinds)
    what = _describe_kinds(allowed)
    payload, declared_raw = split_inline_input(data, mime_type, field=field, allow_data_uri=allow_data_uri)
    declared = _declared_check(declared_raw, field=field, allowed=allowed, what=what)
    raw = decode_base64(payload, field=field, max_bytes=max_bytes)

    sniffed = sniff_mime(raw)
    if sniffed is None:
        raise BadRequest(
            f"{field} is not {what} in a supported format (the data's format was not recognised)",
            param=field,
            code="unsupported_media_type",
        )
    if declared is not None:
        if not mime_matches(declared, sniffed):
            raise BadRequest(
                f"{field}: declared MIME type {declared_raw!r} does not match the data, which is {sniffed}",
                param=field,
                code="mime_type_mismatch",
                details={"declared": declared_raw, "detected": sniffed},
            )
        # Same container under another name: keep the client's (canonical) word for its kind.
        mime = declared if media_kind(declared) != media_kind(sniffed) else sniffed
    else:
        mime = sniffed
        other = SAME_CONTAINER_OTHER_KIND.get(mime, mime)
        if media_kind(mime) not in allowed and media_kind(other) in allowed:
            mime = other
    if media_kind(mime) not in allowed:
        raise BadRequest(
            f"{field} must be {what}, but the data is {sniffed}",
            param=field,
            code="unsupported_media_type",
        )

    width = height = None
    if verify and media_kind(mime) == "image":
        width, height = _inspect_image(raw, mime, field=field, max_pixels=max_pixels)
    return DecodedMedia(data=raw, mime=mime, width=width, height=height)
