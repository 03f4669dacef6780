"""Reading native answer frames without copying their images.

A 4K image is one JSON frame of 10-20 MB, nearly all of it one base64 string. ``orjson.loads``
of such a frame allocates more than ten times the frame size while it builds that string, and
``base64.b64decode`` of the ``str`` copies it again. Here long string values stay where they
are, in the frame's bytes, as :class:`BigString` references: only the small rest of the frame
(the "skeleton") goes through the JSON parser, and an image is decoded straight from its slice
of the frame into its final bytes, once.

A frame relayed open (``studio.core.open_frames``) is kept as it came: its head, its big string's
pieces and its tail (:class:`PassedFrame`); parsed, its string is a :class:`PassedString`, decoded
from its pieces.
"""

from __future__ import annotations

import binascii
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from studio.gateway.media.inline import b64decode_strict
from studio.gateway.media.validation import decode_base64

# Strings at least this long are left in the frame; shorter ones are cheaper to just parse.
BIG_STRING = 16 * 1024
_PLACEHOLDER = "\x00big-string:"
_PASSED = "\x00passed-string"
_PASSED_JSON = b"\\u0000passed-string"
_INLINE_KEYS = ("inlineData", "inline_data")

Buffer = bytes | bytearray


class LongString:
    """A JSON string value too long to have been parsed: its base64 is decoded straight into bytes."""

    __slots__ = ()

    def __len__(self) -> int:
        raise NotImplementedError

    def pieces(self, size: int) -> Iterator[bytes | memoryview]:
        """Its raw text in pieces of about ``size`` bytes, each a multiple of 4 but the last."""
        raise NotImplementedError

    def decode_base64(self) -> bytes:
        raise NotImplementedError

    def text(self) -> str:
        raise NotImplementedError


@dataclass(slots=True, frozen=True)
class BigString(LongString):
    """A JSON string value that still lives in the frame, between ``start`` and ``end``."""

    frame: Buffer
    start: int
    end: int

    def __len__(self) -> int:
        return self.end - self.start

    def raw(self) -> memoryview:
        return memoryview(self.frame)[self.start:self.end]

    def pieces(self, size: int) -> Iterator[memoryview]:
        raw = self.raw()
        size -= size % 4
        return (raw[i:i + size] for i in range(0, len(raw), size))

    def decode_base64(self) -> bytes:
        """The bytes it encodes, decoded straight from the frame (no intermediate ``str``)."""
        raw = self.raw()
        try:
            return b64decode_strict(raw)
        except binascii.Error:
            # JSON escapes (``\\/``), the URL-safe alphabet, missing padding: the slow, tolerant path.
            return decode_base64(self.text(), field="inlineData.data")

    def text(self) -> str:
        return orjson.loads(b'"' + bytes(self.raw()) + b'"')


@dataclass(slots=True, frozen=True)
class PassedString(LongString):
    """The big string of a frame relayed open: its pieces as they came (``chunks``)."""

    chunks: tuple[bytes, ...]

    def __len__(self) -> int:
        return sum(len(c) for c in self.chunks)

    def pieces(self, size: int) -> Iterator[bytes | memoryview]:
        """The string in pieces of a multiple of 4 characters (but the last): first the chunks
        gathered to at least ``size`` characters (a picture's header is in them), then each chunk
        as it came, not copied; the few characters that straddle two chunks make a piece of 4 of
        their own."""
        chunks = iter(self.chunks)
        group: list[bytes] = []
        have = 0
        for chunk in chunks:
            group.append(chunk)
            have += len(chunk)
            if have >= size:
                break
        first = group[0] if len(group) == 1 else b"".join(group)
        cut = have - have % 4
        if cut:
            yield memoryview(first)[:cut]
        carry = first[cut:]
        for chunk in chunks:
            view, start = memoryview(chunk), 0
            if carry:
                start = 4 - len(carry)
                if len(chunk) < start:
                    carry += chunk
                    continue
                yield carry + view[:start]
            end = start + (len(chunk) - start) // 4 * 4
            if end > start:
                yield view[start:end]
            carry = chunk[end:]
        if carry:
            yield carry

    def decode_base64(self) -> bytes:
        joined = b"".join(self.chunks)
        try:
            return b64decode_strict(joined)
        except binascii.Error:
            return decode_base64(self.text(), field="inlineData.data")

    def text(self) -> str:
        return orjson.loads(b"".join((b'"', *self.chunks, b'"')))


@dataclass(slots=True, frozen=True)
class PassedFrame:
    """A frame relayed open, kept as its parts: joined, they are the frame."""

    head: bytes
    string: PassedString
    tail: Buffer

    def __len__(self) -> int:
        return len(self.head) + len(self.string) + len(self.tail)

    def joined(self) -> bytearray:
        return bytearray().join((self.head, *self.string.chunks, self.tail))


def parse_frame(frame: Buffer | PassedFrame) -> Any:
    """``orjson.loads(frame)``, except long strings stay in ``frame`` as :class:`BigString` (or,
    in a frame relayed open, its big string stays in its pieces as a :class:`PassedString`).

    Only the ``data`` of an inline image stays a ``BigString``; any other long string (a very
    long text part) is materialised as a normal ``str``, so callers see ordinary JSON values.
    """
    passed = None
    if isinstance(frame, PassedFrame):
        passed = frame.string
        frame = b"".join((frame.head, _PASSED_JSON, frame.tail))
    spans = _long_strings(frame) if len(frame) >= BIG_STRING else []
    if not spans:
        value = orjson.loads(frame)
        return value if passed is None else _restore(value, [], passed, inline=False)
    view = memoryview(frame)
    pieces: list[bytes] = []
    pos = 0
    for i, (start, end) in enumerate(spans):
        pieces.append(bytes(view[pos:start]))
        pieces.append(b"\\u0000big-string:%d" % i)
        pos = end
    pieces.append(bytes(view[pos:]))
    skeleton = orjson.loads(b"".join(pieces))
    bigs = [BigString(frame, start, end) for start, end in spans]
    return _restore(skeleton, bigs, passed, inline=False)


def _long_strings(frame: Buffer) -> list[tuple[int, int]]:
    """(start, end) of the contents of every JSON string of at least ``BIG_STRING`` bytes.

    Quotes are found with ``find`` (memchr), so a 15 MB base64 run costs one scan; only the
    few quotes of the small rest of the frame are looked at one by one.
    """
    find = frame.find
    spans = []
    pos = 0
    while True:
        opening = find(b'"', pos)
        if opening < 0:
            return spans
        closing = opening
        while True:
            closing = find(b'"', closing + 1)
            if closing < 0:
                return spans  # unterminated: let the JSON parser report it
            backslashes = 0
            while frame[closing - 1 - backslashes] == 0x5C:
                backslashes += 1
            if backslashes % 2 == 0:
                break
        if closing - opening - 1 >= BIG_STRING:
            spans.append((opening + 1, closing))
        pos = closing + 1


def _restore(value: Any, bigs: list[BigString], passed: PassedString | None, *, inline: bool) -> Any:
    if isinstance(value, dict):
        return {k: _restore(v, bigs, passed, inline=(k == "data" and inline) or k in _INLINE_KEYS)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v, bigs, passed, inline=False) for v in value]
    if isinstance(value, str) and value.startswith("\x00"):
        big: LongString | None = None
        if value == _PASSED:
            big = passed
        elif value.startswith(_PLACEHOLDER):
            big = bigs[int(value[len(_PLACEHOLDER):])]
        if big is not None:
            return big if inline else big.text()
    return value


def inline_bytes(data: str | LongString, field: str = "inlineData.data") -> bytes:
    """The bytes of an ``inlineData.data`` value as parsed by :func:`parse_frame`."""
    if isinstance(data, LongString):
        return data.decode_base64()
    return decode_base64(data, field=field)
