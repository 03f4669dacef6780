"""Decoding client base64 and data: URIs: strict, with the leniencies clients need, limits first."""

from __future__ import annotations

import base64

import pytest

from studio.core.errors import BadRequest, PayloadTooLarge
from studio.gateway.media import inline as media_base64
from studio.gateway.media.inline import decode_base64, parse_data_uri, split_inline_input
from tests.gateway.media.samples import b64

FIELD = "messages[0].content[1].image.data"


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


# --- split_inline_input ----------------------------------------------------------------------


def test_split_raw_base64_keeps_the_separate_declaration() -> None:
    assert split_inline_input("  iVBORw0K \n", "image/png", field=FIELD, allow_data_uri=False) == \
        ("iVBORw0K", "image/png")


def test_split_data_uri_type_is_the_declaration() -> None:
    assert split_inline_input("data:image/webp;base64,UklGRg==", "image/png", field=FIELD,
                              allow_data_uri=True) == ("UklGRg==", "image/webp")
    assert split_inline_input("data:;base64,AAAA", "image/gif", field=FIELD, allow_data_uri=True) == \
        ("AAAA", "image/gif")


def test_split_refuses_data_uri_where_raw_base64_is_required() -> None:
    with pytest.raises(BadRequest) as exc:
        split_inline_input("data:image/png;base64,AAAA", None, field=FIELD, allow_data_uri=False)
    assert exc.value.param == FIELD and exc.value.code == "invalid_base64"
    assert "data: URI" in exc.value.message


@pytest.mark.parametrize(("value", "code"), [
    ("data:image/png,notbase64", "invalid_data_uri"),
    ("   ", "invalid_base64"),
    (b"bytes", "invalid_base64"),
])
def test_split_refusals_name_the_field(value, code: str) -> None:
    with pytest.raises(BadRequest) as exc:
        split_inline_input(value, None, field=FIELD, allow_data_uri=True)
    assert (exc.value.param, exc.value.code) == (FIELD, code)


def test_data_uri_header_is_not_searched_past_its_limit() -> None:
    long_header = "data:image/png;" + "x=y;" * 100 + "base64,AAAA"
    assert parse_data_uri(long_header) is None


def test_bytes_input_is_decoded_like_a_string() -> None:
    assert decode_base64(b"aGVsbG8=", field=FIELD) == b"hello"


def test_too_large_reports_the_limit() -> None:
    with pytest.raises(PayloadTooLarge) as exc:
        decode_base64(base64.b64encode(b"y" * 40).decode(), field=FIELD, max_bytes=10)
    assert exc.value.details == {"max_bytes": 10} and exc.value.status == 413
    assert exc.value.code == "payload_too_large"
