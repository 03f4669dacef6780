"""``modelVersion`` in a native answer names the platform model the client asked for.

An answer frame may be 10-20 MB (one base64 image), so it is never parsed for this: the field is
found from the end of the frame, where the vendor puts it after the candidates and usage, and
replaced in place.
"""

from __future__ import annotations

import re

import orjson

_FIELD = b'"modelVersion"'
_VALUE = re.compile(rb'"modelVersion"\s*:\s*"(?:[^"\\]|\\.)*"')


def name_platform_model(frame: bytes | bytearray, model_id: str) -> bytes | bytearray:
    """``frame`` with its ``modelVersion`` (if it has one) set to ``model_id``."""
    at = frame.rfind(_FIELD)
    if at < 0:
        return frame
    found = _VALUE.match(frame, at)
    if found is None:
        return frame
    value = _FIELD + b":" + orjson.dumps(model_id)
    if isinstance(frame, bytearray):
        frame[found.start():found.end()] = value  # near the end: only the tail moves
        return frame
    return frame[:found.start()] + value + frame[found.end():]
