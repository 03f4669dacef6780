"""Validation of inline media: decoding images and other media, declared type against the bytes."""

from __future__ import annotations

import dataclasses
import struct

import pytest
from PIL import Image

from studio.core.errors import BadRequest, PayloadTooLarge
from studio.gateway.media import validation as mv
from studio.gateway.media.validation import (
    DecodedMedia,
    decode_inline_image,
    decode_media,
)
from tests.gateway.media.samples import b64, ftyp, image_bytes, png_with_header_size, wav_bytes

FIELD = "messages[0].content[1].image.data"


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
