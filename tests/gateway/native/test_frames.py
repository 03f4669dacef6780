"""Native answer frames: big image strings stay in the frame and are decoded from it once."""

from __future__ import annotations

import base64
import os

import orjson
import pytest

from studio.core.errors import BadRequest
from studio.gateway.native import frames
from studio.gateway.native.frames import BIG_STRING, BigString, inline_bytes, parse_frame

IMAGE = os.urandom(3 * BIG_STRING)
IMAGE_B64 = base64.b64encode(IMAGE).decode()


def frame(data: str = IMAGE_B64, text: str = "here", key: str = "inlineData") -> bytes:
    return orjson.dumps({"candidates": [{"content": {"role": "model", "parts": [
        {"text": text}, {key: {"mimeType": "image/png", "data": data}, "thoughtSignature": "c2ln"}]},
        "index": 0, "finishReason": "STOP"}], "responseId": "r1"})


def test_small_frames_are_plain_json() -> None:
    small = orjson.dumps({"candidates": [{"content": {"parts": [{"inlineData": {"data": "aGk="}}]}}]})
    assert parse_frame(small) == orjson.loads(small)


def test_image_data_stays_in_the_frame_and_the_rest_is_parsed() -> None:
    raw = frame()
    parsed = parse_frame(raw)
    parts = parsed["candidates"][0]["content"]["parts"]
    assert parts[0] == {"text": "here"} and parts[1]["thoughtSignature"] == "c2ln"
    data = parts[1]["inlineData"]["data"]
    assert isinstance(data, BigString)
    assert data.frame is raw  # a reference into the frame, not a copy
    assert len(data) == len(IMAGE_B64)
    assert bytes(data.raw()) == IMAGE_B64.encode()
    assert parsed["responseId"] == "r1" and parsed["candidates"][0]["finishReason"] == "STOP"


def test_snake_case_inline_data_is_kept_in_the_frame_too() -> None:
    parsed = parse_frame(frame(key="inline_data"))
    assert isinstance(parsed["candidates"][0]["content"]["parts"][1]["inline_data"]["data"], BigString)


def test_image_is_decoded_once_straight_from_the_frame(monkeypatch) -> None:
    parsed = parse_frame(bytearray(frame()))
    data = parsed["candidates"][0]["content"]["parts"][1]["inlineData"]["data"]
    calls = []
    monkeypatch.setattr(frames, "decode_base64", lambda *a, **k: calls.append(a) or b"")
    assert inline_bytes(data) == IMAGE
    assert calls == []  # the clean path never builds a str of the image


def test_long_text_parts_become_ordinary_strings() -> None:
    long_text = "word " * BIG_STRING
    parsed = parse_frame(frame(text=long_text))
    assert parsed["candidates"][0]["content"]["parts"][0]["text"] == long_text


def test_escaped_quotes_and_json_escapes_survive() -> None:
    text = 'she said "hi" \\ and left' + "x" * BIG_STRING
    escaped_b64 = IMAGE_B64.replace("/", "\\/")  # some encoders escape slashes
    raw = frame(text=text).replace(IMAGE_B64.encode(), escaped_b64.encode())
    parsed = parse_frame(raw)
    assert parsed["candidates"][0]["content"]["parts"][0]["text"] == text
    data = parsed["candidates"][0]["content"]["parts"][1]["inlineData"]["data"]
    assert inline_bytes(data) == IMAGE  # the tolerant path undoes the escapes


def test_urlsafe_unpadded_image_data_is_decoded() -> None:
    urlsafe = base64.urlsafe_b64encode(IMAGE).decode().rstrip("=")
    parsed = parse_frame(frame(data=urlsafe))
    assert inline_bytes(parsed["candidates"][0]["content"]["parts"][1]["inlineData"]["data"]) == IMAGE


def test_invalid_image_data_is_a_bad_request_naming_the_field() -> None:
    parsed = parse_frame(frame(data="*" * (BIG_STRING + 3)))
    with pytest.raises(BadRequest) as exc:
        inline_bytes(parsed["candidates"][0]["content"]["parts"][1]["inlineData"]["data"])
    assert exc.value.param == "inlineData.data"


def test_inline_bytes_of_a_plain_string() -> None:
    assert inline_bytes("aGVsbG8=") == b"hello"
    with pytest.raises(BadRequest) as exc:
        inline_bytes("!!", field="candidates[0].data")
    assert exc.value.param == "candidates[0].data"


def test_malformed_json_still_raises() -> None:
    with pytest.raises(orjson.JSONDecodeError):
        parse_frame(frame()[:-5])


# -- frames relayed open ------------------------------------------------------------------------------

def opened(whole: bytes, cuts: list[int]) -> frames.PassedFrame:
    """``whole`` split as a passing reader splits it: head through the image string's opening
    quote, the string in pieces at ``cuts`` (offsets into it), the tail from its closing quote."""
    start = whole.index(b'"data":"') + len(b'"data":"')
    end = whole.index(b'"', start)
    bounds = [start, *(start + c for c in cuts), end]
    chunks = tuple(whole[a:b] for a, b in zip(bounds, bounds[1:], strict=False))
    return frames.PassedFrame(whole[:start], frames.PassedString(chunks), whole[end:])


@pytest.mark.parametrize("cuts", [[], [1], [5, 6, 7], [4096, 4097 + 3 * 4096], list(range(999, 60_000, 999))])
def test_a_frame_relayed_open_parses_as_the_frame_and_its_image_decodes_from_its_pieces(cuts) -> None:
    whole = frame(text="x" * (2 * BIG_STRING))  # a long text in it too: it stays a plain string
    passed = opened(whole, cuts)
    assert bytes(passed.joined()) == whole and len(passed) == len(whole)
    parsed = parse_frame(passed)
    data = parsed["candidates"][0]["content"]["parts"][1]["inlineData"]["data"]
    assert isinstance(data, frames.PassedString)
    assert inline_bytes(data) == IMAGE and data.text() == IMAGE_B64
    parsed["candidates"][0]["content"]["parts"][1]["inlineData"]["data"] = IMAGE_B64
    assert parsed == orjson.loads(whole)
    for size in (4, 1000, 4096, 1 << 20):
        pieces = [bytes(p) for p in data.pieces(size)]
        assert all(len(p) % 4 == 0 for p in pieces[:-1])
        assert b"".join(base64.b64decode(p) for p in pieces) == IMAGE


def test_a_passed_image_with_json_escapes_is_decoded_tolerantly() -> None:
    escaped = IMAGE_B64.replace("/", "\\/")
    whole = frame().replace(IMAGE_B64.encode(), escaped.encode())
    data = parse_frame(opened(whole, [3, 4000]))["candidates"][0]["content"]["parts"][1]["inlineData"]["data"]
    assert inline_bytes(data) == IMAGE
