"""Validation of media that clients send inline (base64 strings and ``data:`` URIs).

Every route that accepts images, video, audio or documents goes through here, so that a bad
upload is refused with a 400 that names the offending field *before* it costs an upstream
call — and so that what we forward is what we claim it is: the declared MIME type is checked
against the bytes (vendors reject mismatches with unhelpful errors, or worse, misread them),
images are opened by Pillow to read their size and catch corrupt/truncated files, and pixel
and byte limits stop decompression bombs and oversized payloads early.

The functions raise the engine's typed errors (``BadRequest`` with ``param`` set to the field,
``PayloadTooLarge``) so every inbound API family renders them in its own error format.
"""

from __future__ import annotations

import binascii
import io
import re
from collections.abc import Collection
from dataclasses import dataclass
from dataclasses import field as dataclass_field

from studio.gateway.errors import BadRequest, PayloadTooLarge

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
# Sniffing
# --------------------------------------------------------------------------------------------

# ISO base media file format (MP4 family) brands. The ``ftyp`` box names a major brand and a
# list of compatible brands; HEIC/AVIF stills and M4A audio share the container with MP4 video,
# so the brand — not the box — decides the type.
_HEIC_BRANDS = frozenset({b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"hevm", b"hevs"})
_AVIF_BRANDS = frozenset({b"avif", b"avis"})
_HEIF_BRANDS = frozenset({b"mif1", b"msf1", b"mif2", b"miaf"})
_M4A_BRANDS = frozenset({b"M4A ", b"M4B ", b"M4P ", b"F4A ", b"F4B "})
_QT_BRANDS = frozenset({b"qt  "})
_MP4_BRANDS = frozenset(
    {
        b"isom", b"iso2", b"iso3", b"iso4", b"iso5", b"iso6", b"iso7", b"iso8", b"iso9",
        b"mp41", b"mp42", b"mp71", b"avc1", b"av01", b"hvc1", b"dash", b"msdh", b"msix",
        b"M4V ", b"M4VH", b"M4VP", b"f4v ", b"F4V ", b"F4P ", b"mmp4", b"MSNV", b"NDAS",
        b"NDSC", b"NDSH", b"NDSM", b"NDSP", b"NDSS", b"NDXC", b"NDXH", b"NDXM", b"NDXP",
        b"NDXS", b"XAVC", b"cmfc", b"cmfs", b"cmf2", b"mp4v", b"CAEP",
    }
)  # fmt: skip
# Top-level atoms a pre-``ftyp`` QuickTime file may start with.
_QT_LEGACY_ATOMS = frozenset({b"moov", b"mdat", b"wide", b"pnot"})


def _sniff_isobmff(data: bytes) -> str | None:
    """Classify an ISO-BMFF file by its ``ftyp`` brands."""
    box_size = int.from_bytes(data[0:4], "big")
    major = data[8:12]
    # Compatible brands run from byte 16 to the end of the box (bounded: never trust sizes).
    end = min(box_size if 16 <= box_size <= 4096 else 16, len(data))
    compatible = {data[i : i + 4] for i in range(16, end - 3, 4)}
    brands = {major} | compatible
    # Major brand first: an AVIF lists ``mif1``/``miaf`` too, a HEIC may list ``mif1``.
    if major in _AVIF_BRANDS:
        return "image/avif"
    if major in _HEIC_BRANDS:
        return "image/heic"
    if major in _QT_BRANDS:
        return "video/quicktime"
    if major in _M4A_BRANDS:
        return "audio/mp4"
    if major[:3] == b"3gp":
        return "video/3gpp"
    if major[:3] == b"3g2":
        return "video/3gpp2"
    if major in _HEIF_BRANDS:
        if brands & _AVIF_BRANDS:
            return "image/avif"
        if brands & _HEIC_BRANDS:
            return "image/heic"
        return "image/heif"
    if major in _MP4_BRANDS or brands & _MP4_BRANDS:
        return "video/mp4"
    if brands & _M4A_BRANDS:
        return "audio/mp4"
    return None


def _sniff_mpeg_audio(data: bytes, offset: int = 0) -> str | None:
    """MPEG-1/2 audio frame (MP3) or ADTS (AAC) at ``offset``, checked field by field.

    A bare 11-bit frame sync is weak evidence, so the reserved values of the header fields are
    rejected too; JPEG (``FF D8``) can never match.
    """
    if len(data) < offset + 4 or data[offset] != 0xFF:
        return None
    b1, b2 = data[offset + 1], data[offset + 2]
    if b1 & 0xF6 == 0xF0:  # 12-bit sync, layer 00: ADTS
        sampling_index = (b2 >> 2) & 0x0F
        return "audio/aac" if sampling_index < 13 else None
    if b1 & 0xE0 != 0xE0:
        return None
    version = (b1 >> 3) & 0x03
    layer = (b1 >> 1) & 0x03
    bitrate_index = b2 >> 4
    rate_index = (b2 >> 2) & 0x03
    if version == 0b01 or layer == 0 or bitrate_index == 0x0F or rate_index == 0x03:
        return None
    return "audio/mpeg"


def _id3_end(data: bytes) -> int:
    """Offset just past an ID3v2 tag (its size is a 28-bit 'syncsafe' integer)."""
    size = 0
    for byte in data[6:10]:
        size = (size << 7) | (byte & 0x7F)
    footer = 10 if data[5] & 0x10 else 0
    return 10 + size + footer


def _looks_like_bmp(data: bytes) -> bool:
    # "BM" alone is far too weak; the DIB header that follows has one of a few fixed sizes.
    if len(data) < 26 or data[:2] != b"BM":
        return False
    dib_size = int.from_bytes(data[14:18], "little")
    return dib_size in (12, 16, 40, 52, 56, 64, 108, 124)


def sniff_mime(data: bytes) -> str | None:
    """The MIME type the bytes really are, from their magic numbers; ``None`` when unknown.

    Only formats the gateway forwards are recognised. SVG and other text formats are
    deliberately not: they cannot be told apart reliably and SVG can carry script.
    """
    head = bytes(data[:64])
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] in (b"RIFF", b"RF64", b"BW64") and len(head) >= 12:
        form = head[8:12]
        if form == b"WEBP" and head[:4] == b"RIFF":
            return "image/webp"
        if form == b"WAVE":
            return "audio/wav"
        return None
    if head[4:8] == b"ftyp" and len(head) >= 12:
        return _sniff_isobmff(bytes(data[:4096]))
    if head.startswith((b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")):
        return "image/tiff"
    if _looks_like_bmp(head):
        return "image/bmp"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        # EBML: the DocType element says whether it is WebM or general Matroska.
        ebml = bytes(data[:128])
        if b"webm" in ebml:
            return "video/webm"
        if b"matroska" in ebml:
            return "video/x-matroska"
        return None
    if head.startswith(b"OggS"):
        # The first page carries the first stream's header packet; Theora means video.
        return "video/ogg" if b"\x80theora" in bytes(data[:512]) else "audio/ogg"
    if head.startswith(b"fLaC"):
        return "audio/flac"
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    if head.startswith(b"ID3") and len(head) >= 10:
        # An ID3 tag usually precedes MP3, occasionally ADTS AAC: look past it when we can.
        after = _sniff_mpeg_audio(data, _id3_end(head))
        return after or "audio/mpeg"
    if head[4:8] in _QT_LEGACY_ATOMS and int.from_bytes(head[:4], "big") >= 8:
        return "video/quicktime"
    return _sniff_mpeg_audio(head)


# --------------------------------------------------------------------------------------------
# MIME comparison
# --------------------------------------------------------------------------------------------

# Spellings clients and vendors really send, mapped to the canonical type ``sniff_mime`` returns.
_ALIASES = {
    "image/jpg": "image/jpeg",
    "image/pjpeg": "image/jpeg",
    "image/jpe": "image/jpeg",
    "image/x-png": "image/png",
    "image/apng": "image/png",
    "image/x-ms-bmp": "image/bmp",
    "image/x-bmp": "image/bmp",
    "image/x-bitmap": "image/bmp",
    "image/tif": "image/tiff",
    "image/x-tiff": "image/tiff",
    "image/heic-sequence": "image/heic",
    "image/heif-sequence": "image/heif",
    "image/x-webp": "image/webp",
    "audio/mp3": "audio/mpeg",
    "audio/x-mp3": "audio/mpeg",
    "audio/mpeg3": "audio/mpeg",
    "audio/x-mpeg": "audio/mpeg",
    "audio/x-mpeg-3": "audio/mpeg",
    "audio/mpg": "audio/mpeg",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/vnd.wave": "audio/wav",
    "audio/x-pn-wav": "audio/wav",
    "audio/x-flac": "audio/flac",
    "audio/x-aac": "audio/aac",
    "audio/aacp": "audio/aac",
    "audio/x-hx-aac-adts": "audio/aac",
    "audio/m4a": "audio/mp4",
    "audio/x-m4a": "audio/mp4",
    "audio/opus": "audio/ogg",
    "audio/vorbis": "audio/ogg",
    "audio/x-ogg": "audio/ogg",
    "application/ogg": "audio/ogg",
    "video/mov": "video/quicktime",
    "video/x-quicktime": "video/quicktime",
    "video/x-m4v": "video/mp4",
    "video/mkv": "video/x-matroska",
    "audio/3gpp": "video/3gpp",
    "audio/3gpp2": "video/3gpp2",
    "application/x-pdf": "application/pdf",
}

# Pairs that are the same container: the bytes alone cannot say which the client meant (an MP4
# with only an audio track, WebM audio, HEIC vs. its HEIF superset, WebM as a Matroska profile).
_COMPATIBLE = frozenset(
    {
        frozenset({"image/heic", "image/heif"}),
        frozenset({"video/mp4", "audio/mp4"}),
        frozenset({"video/webm", "audio/webm"}),
        frozenset({"video/webm", "video/x-matroska"}),
        frozenset({"video/x-matroska", "audio/x-matroska"}),
        frozenset({"video/ogg", "audio/ogg"}),
    }
)
# When the sniffed type is one side of an ambiguous container, the other kind it may be.
_OTHER_KIND = {
    "video/mp4": "audio/mp4",
    "audio/mp4": "video/mp4",
    "video/webm": "audio/webm",
    "video/x-matroska": "audio/x-matroska",
    "video/ogg": "audio/ogg",
    "audio/ogg": "video/ogg",
}

_MIME_RE = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$")


def normalize_mime(mime: str) -> str:
    """Lower-case, parameters dropped (``; codecs=...``), aliases resolved."""
    base = mime.split(";", 1)[0].strip().lower()
    return _ALIASES.get(base, base)


def mime_matches(declared: str, sniffed: str) -> bool:
    """Whether a client's declared MIME type is an acceptable name for the sniffed bytes.

    Tolerant of real-world spellings (``image/jpg``, ``audio/mp3``, ``audio/x-wav``,
    ``video/mov``) and of containers the bytes cannot disambiguate, but QuickTime and MP4 stay
    distinct: several vendors accept one and not the other.
    """
    a, b = normalize_mime(declared), normalize_mime(sniffed)
    return a == b or frozenset({a, b}) in _COMPATIBLE


def media_kind(mime: str) -> str:
    """``image``, ``video``, ``audio`` or ``document`` (anything ``application/*``)."""
    top = normalize_mime(mime).split("/", 1)[0]
    return "document" if top == "application" else top


# --------------------------------------------------------------------------------------------
# base64 and data: URIs
# --------------------------------------------------------------------------------------------

# One pass that both maps the URL-safe alphabet onto the standard one and (via ``delete``)
# drops whitespace — the lenient fallback costs one extra copy, not one per fix-up.
_URLSAFE_TO_STD = bytes.maketrans(b"-_", b"+/")
_WHITESPACE = b" \t\r\n\v\f"


def _too_large(field: str, max_bytes: int, size: int | None = None) -> PayloadTooLarge:
    got = f" ({size} bytes)" if size is not None else ""
    return PayloadTooLarge(
        f"{field} is too large{got}: at most {max_bytes} bytes are accepted",
        param=field,
        code="payload_too_large",
        details={"max_bytes": max_bytes},
    )


def _invalid_base64(field: str) -> BadRequest:
    return BadRequest(f"{field} is not valid base64", param=field, code="invalid_base64")


def decode_base64(data: str, *, field: str, max_bytes: int | None = None) -> bytes:
    """Decode client base64: strict, but with the leniencies real vendors' clients need.

    Accepted: the standard alphabet, the URL-safe alphabet, missing ``=`` padding, and
    whitespace/newlines (MIME-style wrapped lines). Anything else — stray characters, padding
    in the middle, a dangling 6-bit group — is a ``BadRequest`` naming ``field``.

    The size limit is checked from the encoded length first, so megabytes of junk are refused
    without being decoded. The common case (clean standard base64) is a single C-level decode
    of the ``str`` with no intermediate copy.
    """
    if isinstance(data, bytes | bytearray | memoryview):
        data = bytes(data).decode("ascii", errors="replace")
    if not isinstance(data, str):
        raise BadRequest(f"{field} must be a base64 string", param=field, code="invalid_base64")
    if max_bytes is not None:
        # 4 characters carry 3 bytes. Allow generously for whitespace before counting exactly:
        # anything beyond twice the maximum encoded length is junk however it is wrapped.
        if len(data) > 2 * (max_bytes * 4 // 3 + 4) + 1024:
            raise _too_large(field, max_bytes)
        if len(data) * 3 // 4 > max_bytes:
            significant = len(data) - sum(data.count(c) for c in " \t\r\n\v\f") - data.count("=")
            if significant * 3 // 4 > max_bytes:
                raise _too_large(field, max_bytes, significant * 3 // 4)
    try:
        decoded = binascii.a2b_base64(data, strict_mode=True)
    except ValueError:  # binascii.Error, or non-ASCII characters in the str
        decoded = _decode_base64_lenient(data, field)
    if not decoded:
        raise BadRequest(f"{field} is empty", param=field, code="invalid_base64")
    if max_bytes is not None and len(decoded) > max_bytes:
        raise _too_large(field, max_bytes, len(decoded))
    return decoded


def _decode_base64_lenient(data: str, field: str) -> bytes:
    try:
        raw = data.encode("ascii")
    except UnicodeEncodeError:
        raise _invalid_base64(field) from None
    raw = raw.translate(_URLSAFE_TO_STD, _WHITESPACE)
    # Re-pad: strip whatever padding there is and add exactly what the length needs. Padding in
    # the middle survives the rstrip and is still rejected by strict mode below.
    stripped = raw.rstrip(b"=")
    if len(raw) - len(stripped) > 2 or len(stripped) % 4 == 1:
        raise _invalid_base64(field)
    if len(stripped) != len(raw) or len(raw) % 4:
        raw = stripped + b"=" * (-len(stripped) % 4)
    try:
        return binascii.a2b_base64(raw, strict_mode=True)
    except binascii.Error:
        raise _invalid_base64(field) from None


# The header of a data URI is short; never scan megabytes of payload looking for the comma.
_DATA_URI_HEADER_MAX = 256


def _has_data_prefix(value: str) -> bool:
    return value[:5].lower() == "data:"


def _parse_data_uri(value: str) -> tuple[str, str] | None:
    """Like :func:`parse_data_uri` but the MIME type is ``""`` when the URI names none."""
    if not isinstance(value, str) or not _has_data_prefix(value):
        return None
    comma = value.find(",", 5, _DATA_URI_HEADER_MAX)
    if comma < 0:
        return None
    params = value[5:comma].split(";")
    if len(params) < 2 or params[-1].strip().lower() != "base64":
        return None
    mime = params[0].strip().lower()
    if mime and not _MIME_RE.match(mime):
        return None
    return mime, value[comma + 1 :]


def parse_data_uri(value: str) -> tuple[str, str] | None:
    """``(mime, base64 payload)`` for a ``data:<mime>[;param=v]*;base64,<payload>`` URI.

    ``None`` when ``value`` is not a base64 data URI (including non-base64 data URIs and
    malformed headers). The MIME type is lower-cased without parameters; an empty one means
    ``text/plain`` (RFC 2397).
    """
    parsed = _parse_data_uri(value)
    if parsed is None:
        return None
    mime, payload = parsed
    return mime or "text/plain", payload


def _split_input(
    data: str, mime_type: str | None, *, field: str, allow_data_uri: bool
) -> tuple[str, str | None]:
    """The base64 payload and the declared MIME type, from either a raw string or a data URI."""
    if not isinstance(data, str):
        raise BadRequest(f"{field} must be a base64 string", param=field, code="invalid_base64")
    data = data.strip()
    if not data:
        raise BadRequest(f"{field} is empty", param=field, code="invalid_base64")
    if _has_data_prefix(data):
        if not allow_data_uri:
            raise BadRequest(
                f"{field} must be raw base64 without a data: URI prefix",
                param=field,
                code="invalid_base64",
            )
        parsed = _parse_data_uri(data)
        if parsed is None:
            raise BadRequest(
                f"{field} is not a valid data: URI (expected data:<mime type>;base64,<data>)",
                param=field,
                code="invalid_data_uri",
            )
        uri_mime, payload = parsed
        # The URI's own type is the declaration; "data:;base64," falls back to the separate one.
        return payload, (uri_mime or mime_type)
    return data, mime_type


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
    if not _MIME_RE.match(canonical):
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
    payload, declared_raw = _split_input(data, mime_type, field=field, allow_data_uri=allow_data_uri)
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
        if media_kind(mime) not in allowed and media_kind(_OTHER_KIND.get(mime, mime)) in allowed:
            mime = _OTHER_KIND[mime]
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
