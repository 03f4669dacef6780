"""Validation of inline media: sniffing, MIME equivalence, base64, data URIs, image checks."""

from __future__ import annotations

import base64
import dataclasses
import io
import struct
import wave
import zlib

import pytest
from PIL import Image

from studio.gateway import media_base64
from studio.gateway import media_validation as mv
from studio.gateway.errors import BadRequest, PayloadTooLarge
from studio.gateway.media_validation import (
    DecodedMedia,
    decode_base64,
    decode_inline_image,
    decode_media,
    mime_matches,
    parse_data_uri,
    sniff_mime,
)

FIELD = "messages[0].content[1].image.data"


# --- fixtures: real tiny files --------------------------------------------------------------


def image_bytes(fmt: str, size: tuple[int, int] = (4, 3), **kw: object) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, (200, 30, 60)).save(buf, fmt, **kw)
    return buf.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@pytest.fixture(scope="module")
def png() -> bytes:
    return image_bytes("PNG")


@pytest.fixture(scope="module")
def jpeg() -> bytes:
    return image_bytes("JPEG", (32, 24))


@pytest.fixture(scope="module")
def webp() -> bytes:
    return image_bytes("WEBP", (32, 24))


def wav_bytes() -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x00" * 80)
    return buf.getvalue()


def ftyp(major: bytes, *compatible: bytes) -> bytes:
    """An ISO-BMFF ``ftyp`` box followed by an empty ``mdat``, enough for sniffing."""
    body = major + b"\x00\x00\x00\x00" + b"".join(compatible)
    return struct.pack(">I", 8 + len(body)) + b"ftyp" + body + struct.pack(">I", 8) + b"mdat"


def png_with_header_size(width: int, height: int) -> bytes:
    """A syntactically valid PNG whose IHDR claims ``width``x``height`` (a 'bomb' header)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")
    )


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


# --- decode_base64 ---------------------------------------------------------------------------

PAYLOAD = bytes(range(256)) * 3 + b"\xfb\xff"  # exercises '+' and '/' and needs padding


def test_base64_standard() -> None:
    assert decode_base64(b64(PAYLOAD), field=FIELD) == PAYLOAD


def test_base64_urlsafe_without_padding() -> None:
    encoded = base64.urlsafe_b64encode(PAYLOAD).decode().rstrip("=")
    assert "-" in encoded and "_" in encoded
    assert decode_base64(encoded, field=FIELD) == PAYLOAD


def test_base64_missing_padding() -> None:
    encoded = b64(b"ab")  # "YWI="
    assert decode_base64(encoded.rstrip("="), field=FIELD) == b"ab"


def test_base64_wrapped_lines_and_spaces() -> None:
    wrapped = base64.encodebytes(PAYLOAD).decode()  # 76-char lines
    assert "\n" in wrapped
    assert decode_base64(wrapped, field=FIELD) == PAYLOAD
    assert decode_base64("  " + wrapped.replace("\n", "\r\n\t "), field=FIELD) == PAYLOAD


@pytest.mark.parametrize(
    "bad",
    [
        "not base64!",
        "YWJj*ZGVm",
        "YW=JjZGVm",  # padding in the middle
        "YWJjZ",  # a dangling 6-bit group can never be valid
        "YQ===",
        "=YWJj",
        "YWJjZGVm\x00",
        "éàü",
    ],
)
def test_base64_invalid_names_field(bad: str) -> None:
    with pytest.raises(BadRequest) as exc:
        decode_base64(bad, field=FIELD)
    assert exc.value.param == FIELD
    assert FIELD in exc.value.message
    assert "base64" in exc.value.message


def test_base64_empty_is_rejected() -> None:
    with pytest.raises(BadRequest, match="empty") as exc:
        decode_base64("", field=FIELD)
    assert exc.value.param == FIELD


def test_base64_size_limit_exact_and_over() -> None:
    assert decode_base64(b64(b"x" * 300), field=FIELD, max_bytes=300) == b"x" * 300
    with pytest.raises(PayloadTooLarge) as exc:
        decode_base64(b64(b"x" * 301), field=FIELD, max_bytes=300)
    assert exc.value.param == FIELD
    assert FIELD in exc.value.message


def test_base64_size_limit_does_not_count_line_breaks() -> None:
    data = bytes(range(256)) * 4
    wrapped = base64.encodebytes(data).decode().replace("\n", "\r\n")
    assert len(wrapped) * 3 // 4 > len(data)  # the naive estimate would refuse it
    assert decode_base64(wrapped, field=FIELD, max_bytes=len(data)) == data


def test_base64_oversized_junk_is_refused_before_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("must not decode")

    monkeypatch.setattr(media_base64.binascii, "a2b_base64", boom)
    with pytest.raises(PayloadTooLarge):
        decode_base64("!" * 100_000, field=FIELD, max_bytes=1000)


def test_base64_large_input_is_fast_enough() -> None:
    data = bytes(range(256)) * (15 * 1024 * 1024 // 256)
    assert decode_base64(b64(data), field=FIELD, max_bytes=20 * 1024 * 1024) == data
    urlsafe = base64.urlsafe_b64encode(data).decode().rstrip("=")
    assert decode_base64(urlsafe, field=FIELD, max_bytes=20 * 1024 * 1024) == data


# --- parse_data_uri --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("data:image/png;base64,iVBORw0K", ("image/png", "iVBORw0K")),
        ("DATA:Image/JPEG;BASE64,/9j/", ("image/jpeg", "/9j/")),
        ("data:audio/wav;name=a.wav;base64,UklGRg==", ("audio/wav", "UklGRg==")),
        ("data:;base64,AAAA", ("text/plain", "AAAA")),
        ("data:image/png,rawtext", None),  # not base64
        ("data:image/png;base64", None),  # no comma
        ("data:not a mime;base64,AAAA", None),
        ("iVBORw0KGgo=", None),
        ("https://example.com/a.png", None),
    ],
)
def test_parse_data_uri(value: str, expected: tuple[str, str] | None) -> None:
    assert parse_data_uri(value) == expected


# --- decode_inline_image ---------------------------------------------------------------------


def assert_bad(exc: pytest.ExceptionInfo[BadRequest], *words: str) -> None:
    assert exc.value.param == FIELD
    assert FIELD in exc.value.message
    for word in words:
        assert word in exc.value.message, exc.value.message


def test_png_accepted_with_size(png: bytes) -> None:
    media = decode_inline_image(b64(png), "image/png", field=FIELD)
    assert media == DecodedMedia(data=png, mime="image/png", width=4, height=3)
    assert media.kind == "image" and media.size == len(png)


def test_jpeg_declared_as_jpg_is_canonicalised(jpeg: bytes) -> None:
    media = decode_inline_image(b64(jpeg), "image/jpg", field=FIELD)
    assert (media.mime, media.width, media.height) == ("image/jpeg", 32, 24)


def test_webp_without_declared_type_is_sniffed(webp: bytes) -> None:
    media = decode_inline_image(b64(webp), None, field=FIELD)
    assert (media.mime, media.width, media.height) == ("image/webp", 32, 24)


def test_decoded_media_is_frozen_and_repr_hides_bytes(png: bytes) -> None:
    media = decode_inline_image(b64(png), None, field=FIELD)
    with pytest.raises(dataclasses.FrozenInstanceError):
        media.mime = "image/gif"  # type: ignore[misc]
    assert "IHDR" not in repr(media) and "image/png" in repr(media)


def test_png_declared_as_jpeg_is_rejected_naming_both(png: bytes) -> None:
    with pytest.raises(BadRequest) as exc:
        decode_inline_image(b64(png), "image/jpeg", field=FIELD)
    assert_bad(exc, "image/jpeg", "image/png")
    assert exc.value.code == "mime_type_mismatch"


def test_data_uri_prefix_rejected_by_default(png: bytes) -> None:
    with pytest.raises(BadRequest) as exc:
        decode_inline_image("data:image/png;base64," + b64(png), "image/png", field=FIELD)
    assert_bad(exc, "must be raw base64 without a data: URI prefix")


def test_data_uri_accepted_when_allowed_and_its_type_is_the_declaration(png: bytes) -> None:
    media = decode_inline_image("data:image/png;base64," + b64(png), None, field=FIELD, allow_data_uri=True)
    assert (media.mime, media.width) == ("image/png", 4)
    with pytest.raises(BadRequest) as exc:
        decode_inline_image("data:image/jpeg;base64," + b64(png), None, field=FIELD, allow_data_uri=True)
    assert_bad(exc, "image/jpeg", "image/png")


def test_data_uri_without_type_falls_back_to_declared(png: bytes) -> None:
    media = decode_inline_image("data:;base64," + b64(png), "image/png", field=FIELD, allow_data_uri=True)
    assert media.mime == "image/png"


def test_malformed_data_uri(png: bytes) -> None:
    with pytest.raises(BadRequest) as exc:
        decode_inline_image("data:image/png," + b64(png), None, field=FIELD, allow_data_uri=True)
    assert_bad(exc, "data: URI")


def test_invalid_base64_image() -> None:
    with pytest.raises(BadRequest) as exc:
        decode_inline_image("%%% definitely not base64 %%%", "image/png", field=FIELD)
    assert_bad(exc, "base64")


def test_declared_type_not_an_image(png: bytes) -> None:
    with pytest.raises(BadRequest) as exc:
        decode_inline_image(b64(png), "application/pdf", field=FIELD)
    assert_bad(exc, "application/pdf", "not an image")


def test_garbage_declared_type(png: bytes) -> None:
    with pytest.raises(BadRequest) as exc:
        decode_inline_image(b64(png), "png please", field=FIELD)
    assert_bad(exc, "not a valid MIME type")


def test_bytes_not_an_image() -> None:
    with pytest.raises(BadRequest) as exc:
        decode_inline_image(b64(b"%PDF-1.4\n..."), None, field=FIELD)
    assert_bad(exc, "must be an image", "application/pdf")
    with pytest.raises(BadRequest) as exc:
        decode_inline_image(b64(b"just some text, really"), "image/png", field=FIELD)
    assert_bad(exc, "not recognised")


def test_svg_is_not_accepted() -> None:
    svg = b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>"
    with pytest.raises(BadRequest) as exc:
        decode_inline_image(b64(svg), "image/svg+xml", field=FIELD)
    assert_bad(exc)


@pytest.mark.parametrize("keep", [0.8, 0.5, 0.3])
def test_truncated_png_is_rejected(png: bytes, keep: float) -> None:
    with pytest.raises(BadRequest) as exc:
        decode_inline_image(b64(png[: int(len(png) * keep)]), "image/png", field=FIELD)
    assert_bad(exc, "corrupt or truncated")


def test_truncated_jpeg_is_rejected() -> None:
    jpeg = image_bytes("JPEG", (64, 64))
    with pytest.raises(BadRequest) as exc:
        decode_inline_image(b64(jpeg[: len(jpeg) * 2 // 3]), "image/jpeg", field=FIELD)
    assert_bad(exc, "corrupt or truncated")


def test_truncated_webp_is_rejected(webp: bytes) -> None:
    with pytest.raises(BadRequest) as exc:
        decode_inline_image(b64(webp[:-10]), None, field=FIELD)
    assert_bad(exc, "corrupt or truncated")


def test_corrupt_png_crc_is_rejected(png: bytes) -> None:
    broken = bytearray(png)
    broken[40] ^= 0xFF  # inside the IDAT data: the chunk CRC no longer matches
    with pytest.raises(BadRequest) as exc:
        decode_inline_image(b64(bytes(broken)), None, field=FIELD)
    assert_bad(exc, "corrupt or truncated")


def test_verify_false_skips_pillow(png: bytes) -> None:
    media = decode_inline_image(b64(png[:-20]), "image/png", field=FIELD, verify=False)
    assert (media.mime, media.width, media.height) == ("image/png", None, None)


def test_pixel_limit() -> None:
    big = image_bytes("PNG", (200, 100))
    assert decode_inline_image(b64(big), None, field=FIELD, max_pixels=20_000).width == 200
    with pytest.raises(BadRequest) as exc:
        decode_inline_image(b64(big), None, field=FIELD, max_pixels=19_999)
    assert_bad(exc, "200x100", "19999")
    assert exc.value.code == "image_too_large"


def test_decompression_bomb_header_is_rejected_without_decoding() -> None:
    bomb = png_with_header_size(30_000, 30_000)  # 900 megapixels claimed by a ~60-byte file
    assert len(bomb) < 100
    with pytest.raises(BadRequest) as exc:
        decode_inline_image(b64(bomb), "image/png", field=FIELD)
    assert_bad(exc, "pixels")


def test_pillow_bomb_guard_is_reported_as_bad_request(monkeypatch: pytest.MonkeyPatch) -> None:
    # Pillow's own process-wide limit fires inside Image.open, before our limit is consulted.
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)
    with pytest.raises(BadRequest) as exc:
        decode_inline_image(b64(image_bytes("PNG", (100, 100))), None, field=FIELD, max_pixels=10**9)
    assert_bad(exc, "decompression bomb")


def test_payload_too_large(png: bytes) -> None:
    with pytest.raises(PayloadTooLarge) as exc:
        decode_inline_image(b64(png), None, field=FIELD, max_bytes=len(png) - 1)
    assert exc.value.param == FIELD and FIELD in exc.value.message


def test_non_string_input() -> None:
    with pytest.raises(BadRequest) as exc:
        decode_inline_image(None, None, field=FIELD)  # type: ignore[arg-type]
    assert_bad(exc, "base64 string")


def test_heic_without_decoder_is_sniffed_and_size_read_from_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    ispe = struct.pack(">I", 20) + b"ispe" + b"\x00\x00\x00\x00" + struct.pack(">II", 4032, 3024)
    heic = ftyp(b"heic", b"mif1", b"heic") + struct.pack(">I", 8 + len(ispe)) + b"meta" + ispe
    monkeypatch.setattr(mv, "_pillow_can_open", lambda mime: False)
    media = decode_inline_image(b64(heic), "image/heif", field=FIELD)
    assert (media.mime, media.width, media.height) == ("image/heic", 4032, 3024)
    with pytest.raises(BadRequest) as exc:
        decode_inline_image(b64(heic), "image/heic", field=FIELD, max_pixels=1_000_000)
    assert_bad(exc, "4032x3024")


# --- decode_media ----------------------------------------------------------------------------


def test_media_audio_wav() -> None:
    wav = wav_bytes()
    media = decode_media(b64(wav), "audio/x-wav", field=FIELD, allowed_kinds={"audio"})
    assert (media.mime, media.kind, media.width, media.data) == ("audio/wav", "audio", None, wav)


def test_media_video_data_uri() -> None:
    mp4 = ftyp(b"isom", b"isom", b"mp41")
    media = decode_media("data:video/mp4;base64," + b64(mp4), None, field=FIELD, allow_data_uri=True)
    assert (media.mime, media.kind) == ("video/mp4", "video")
    with pytest.raises(BadRequest) as exc:
        decode_media("data:video/mp4;base64," + b64(mp4), None, field=FIELD)
    assert_bad(exc, "data: URI prefix")


def test_media_kind_not_allowed() -> None:
    mp4 = ftyp(b"isom", b"isom")
    with pytest.raises(BadRequest) as exc:
        decode_media(b64(mp4), "video/mp4", field=FIELD, allowed_kinds={"image", "audio"})
    assert_bad(exc, "video/mp4", "audio or an image")
    with pytest.raises(BadRequest) as exc:
        decode_media(b64(mp4), None, field=FIELD, allowed_kinds={"image"})
    assert_bad(exc, "must be an image", "video/mp4")


def test_media_ambiguous_container_believes_the_declared_kind() -> None:
    mp4 = ftyp(b"isom", b"isom", b"mp42")  # an MP4 holding only audio looks like this too
    media = decode_media(b64(mp4), "audio/mp4", field=FIELD, allowed_kinds={"audio"})
    assert (media.mime, media.kind) == ("audio/mp4", "audio")
    media = decode_media(b64(mp4), None, field=FIELD, allowed_kinds={"audio"})
    assert media.mime == "audio/mp4"


def test_media_quicktime_declared_as_mp4_is_rejected() -> None:
    mov = ftyp(b"qt  ", b"qt  ")
    assert decode_media(b64(mov), "video/mov", field=FIELD).mime == "video/quicktime"
    with pytest.raises(BadRequest) as exc:
        decode_media(b64(mov), "video/mp4", field=FIELD)
    assert_bad(exc, "video/mp4", "video/quicktime")


def test_media_document_kind() -> None:
    pdf = b"%PDF-1.7\n1 0 obj\n<<>>\nendobj\n%%EOF\n"
    media = decode_media(b64(pdf), "application/pdf", field=FIELD, allowed_kinds={"document"})
    assert (media.mime, media.kind) == ("application/pdf", "document")


def test_media_images_still_verified(png: bytes) -> None:
    media = decode_media(b64(png), "image/png", field=FIELD)
    assert (media.width, media.height) == (4, 3)
    with pytest.raises(BadRequest) as exc:
        decode_media(b64(png[:-12]), "image/png", field=FIELD)
    assert_bad(exc, "corrupt or truncated")
