"""Tiny real media files for the media tests (made with Pillow and the stdlib)."""

from __future__ import annotations

import base64
import io
import struct
import wave
import zlib

from PIL import Image


def image_bytes(fmt: str, size: tuple[int, int] = (4, 3), **kw: object) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, (200, 30, 60)).save(buf, fmt, **kw)
    return buf.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


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
