"""What media bytes really are, and which MIME names are acceptable for them.

:mod:`studio.gateway.media.validation` refuses uploads whose declared type does not match their
bytes; this module supplies both halves of that comparison. ``sniff_mime`` reads magic numbers
(never the client's word, which is often wrong and sometimes hostile), and the MIME tables
tolerate the spellings real clients send (``image/jpg``, ``audio/x-wav``) and the containers the
bytes cannot disambiguate (an MP4 that holds only audio) without blurring distinctions vendors
care about (QuickTime is not MP4). Kept apart because callers that only need to identify bytes —
fetched images, rendered videos — should not pull in the decoding rules.
"""

from __future__ import annotations

import re

__all__ = [
    "SAME_CONTAINER_OTHER_KIND",
    "VALID_MIME_RE",
    "media_kind",
    "mime_matches",
    "normalize_mime",
    "sniff_mime",
]

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
SAME_CONTAINER_OTHER_KIND = {
    "video/mp4": "audio/mp4",
    "audio/mp4": "video/mp4",
    "video/webm": "audio/webm",
    "video/x-matroska": "audio/x-matroska",
    "video/ogg": "audio/ogg",
    "audio/ogg": "video/ogg",
}

# A syntactically valid ``type/subtype`` (lower-case, no parameters).
VALID_MIME_RE = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$")


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
