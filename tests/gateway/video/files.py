"""Small real result files for the video tests: an MP4 header and a PNG frame."""

from __future__ import annotations

import io

from PIL import Image


def mp4_bytes() -> bytes:
    body = b"isom\x00\x00\x02\x00isomiso2avc1mp41"
    return (8 + len(body)).to_bytes(4, "big") + b"ftyp" + body + b"\x00\x00\x00\x08free" + b"\x00" * 4000


def png_bytes() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (32, 18), "teal").save(buffer, "PNG")
    return buffer.getvalue()
