"""What bytes really are (magic numbers) and which MIME spellings name them."""

from __future__ import annotations

import pytest

from studio.gateway.media.sniff import media_kind, mime_matches, normalize_mime, sniff_mime
from tests.gateway.media.samples import ftyp, image_bytes, wav_bytes

# --- sniff_mime ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "mime"),
    [
        ("PNG", "image/png"),
        ("JPEG", "image/jpeg"),
        ("WEBP", "image/webp"),
        ("GIF", "image/gif"),
        ("BMP", "image/bmp"),
        ("TIFF", "image/tiff"),
        ("AVIF", "image/avif"),
    ],
)
def test_sniff_images_made_by_pillow(fmt: str, mime: str) -> None:
    assert sniff_mime(image_bytes(fmt)) == mime


@pytest.mark.parametrize(
    ("data", "mime"),
    [
        (ftyp(b"heic", b"mif1", b"heic"), "image/heic"),
        (ftyp(b"mif1", b"mif1", b"heic"), "image/heic"),
        (ftyp(b"mif1", b"mif1", b"avif"), "image/avif"),
        (ftyp(b"mif1", b"mif1", b"miaf"), "image/heif"),
        (ftyp(b"avif", b"avif", b"mif1", b"miaf"), "image/avif"),
        (ftyp(b"isom", b"isom", b"iso2", b"avc1", b"mp41"), "video/mp4"),
        (ftyp(b"mp42", b"mp42", b"isom"), "video/mp4"),
        (ftyp(b"xxxx", b"isom"), "video/mp4"),
        (ftyp(b"qt  ", b"qt  "), "video/quicktime"),
        (ftyp(b"M4A ", b"M4A ", b"mp42", b"isom"), "audio/mp4"),
        (ftyp(b"3gp4", b"isom"), "video/3gpp"),
        (ftyp(b"crx ", b"crx "), None),
        (b"\x00\x00\x00\x08wide\x00\x00\x00\x10mdat", "video/quicktime"),
        (b"\x1a\x45\xdf\xa3\xa3\x42\x86\x81\x01\x42\x82\x84webm\x42\x87\x81\x04", "video/webm"),
        (b"\x1a\x45\xdf\xa3\xa3\x42\x82\x88matroska", "video/x-matroska"),
        (b"OggS\x00\x02" + b"\x00" * 22 + b"\x01\x1eOpusHead", "audio/ogg"),
        (b"OggS\x00\x02" + b"\x00" * 22 + b"\x01\x2a\x80theora", "video/ogg"),
        (b"fLaC\x00\x00\x00\x22" + b"\x00" * 34, "audio/flac"),
        (b"ID3\x03\x00\x00\x00\x00\x00\x00" + b"\xff\xfb\x90\x64" + b"\x00" * 16, "audio/mpeg"),
        (b"ID3\x03\x00\x00\x00\x00\x00\x00" + b"\xff\xf1\x50\x80" + b"\x00" * 16, "audio/aac"),
        (b"\xff\xfb\x90\x64" + b"\x00" * 16, "audio/mpeg"),  # MPEG-1 layer III frame
        (b"\xff\xf1\x50\x80\x02\x1f\xfc", "audio/aac"),  # ADTS
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "application/pdf"),
        (b"RIFF\x24\x00\x00\x00AVI LIST", None),
        (b"<svg xmlns='http://www.w3.org/2000/svg'/>", None),
        (b"\xff\xff\xff\xff" + b"\x00" * 8, None),  # sync bits but reserved header values
        (b"BM\x00\x00", None),  # too short / no DIB header to be a BMP
        (b"", None),
        (b"hello world, not media", None),
    ],
)
def test_sniff_magic_numbers(data: bytes, mime: str | None) -> None:
    assert sniff_mime(data) == mime


def test_sniff_wav() -> None:
    assert sniff_mime(wav_bytes()) == "audio/wav"


# --- mime_matches ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("declared", "sniffed"),
    [
        ("image/jpeg", "image/jpeg"),
        ("image/jpg", "image/jpeg"),
        ("IMAGE/JPEG", "image/jpeg"),
        ("image/pjpeg", "image/jpeg"),
        ("image/x-png", "image/png"),
        ("image/heic", "image/heif"),
        ("image/heif", "image/heic"),
        ("audio/mp3", "audio/mpeg"),
        ("audio/x-wav", "audio/wav"),
        ("audio/wave", "audio/wav"),
        ("audio/x-m4a", "audio/mp4"),
        ("audio/mp4", "video/mp4"),
        ("audio/webm", "video/webm"),
        ("audio/opus", "audio/ogg"),
        ("video/mov", "video/quicktime"),
        ("video/quicktime", "video/quicktime"),
        ("video/mp4; codecs=avc1.42E01E", "video/mp4"),
    ],
)
def test_mime_matches_tolerates_real_spellings(declared: str, sniffed: str) -> None:
    assert mime_matches(declared, sniffed)


@pytest.mark.parametrize(
    ("declared", "sniffed"),
    [
        ("image/jpeg", "image/png"),
        ("image/png", "image/webp"),
        ("image/heic", "image/avif"),
        ("video/quicktime", "video/mp4"),
        ("video/mp4", "video/quicktime"),
        ("audio/mpeg", "audio/wav"),
        ("application/octet-stream", "image/png"),
        ("image/*", "image/png"),
    ],
)
def test_mime_matches_rejects_different_types(declared: str, sniffed: str) -> None:
    assert not mime_matches(declared, sniffed)


# --- normalize_mime and media_kind -----------------------------------------------------------


@pytest.mark.parametrize(("raw", "canonical"), [
    ("Image/JPG", "image/jpeg"),
    ("video/mp4; codecs=\"avc1.42E01E\"", "video/mp4"),
    ("  audio/x-wav ", "audio/wav"),
    ("application/x-pdf", "application/pdf"),
    ("image/png", "image/png"),
])
def test_normalize_mime(raw: str, canonical: str) -> None:
    assert normalize_mime(raw) == canonical


@pytest.mark.parametrize(("mime", "kind"), [
    ("image/jpg", "image"), ("video/quicktime", "video"), ("audio/mp3", "audio"),
    ("application/pdf", "document"), ("application/x-pdf", "document"),
])
def test_media_kind(mime: str, kind: str) -> None:
    assert media_kind(mime) == kind


def test_sniff_reads_only_the_head_of_large_data() -> None:
    png = image_bytes("PNG")
    assert sniff_mime(png + b"\x00" * 5_000_000) == "image/png"
    assert sniff_mime(memoryview(png)) == "image/png"


def test_quicktime_and_mp4_stay_distinct_after_sniffing() -> None:
    mov = sniff_mime(ftyp(b"qt  ", b"qt  "))
    mp4 = sniff_mime(ftyp(b"isom", b"isom"))
    assert (mov, mp4) == ("video/quicktime", "video/mp4")
    assert not mime_matches("video/mp4", mov)
    assert mime_matches("audio/mp4", mp4)
