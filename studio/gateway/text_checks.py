"""Text every record must be able to keep: no NUL characters anywhere in a request.

A NUL (``\\u0000``) is valid JSON, but PostgreSQL text and JSON columns cannot hold it, so a
request carrying one could be served and then never recorded (unbilled). It is refused before
any upstream call, naming the field. Checking the raw bytes first keeps the common case to one
``bytes.find``.
"""

from __future__ import annotations

from typing import Any

from studio.core.errors import BadRequest

_ESCAPED_NUL = b"\\u0000"


def refuse_nul(body: Any, raw: bytes | None = None) -> None:
    """Raise ``BadRequest`` naming the first field whose text holds a NUL character."""
    if raw is not None and _ESCAPED_NUL not in raw and b"\x00" not in raw:
        return
    path = _find(body, "")
    if path is not None:
        raise BadRequest(f"'{path or 'body'}' must not contain NUL (\\u0000) characters", param=path or "body")


def _find(value: Any, path: str) -> str | None:
    if isinstance(value, str):
        return path if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and "\x00" in key:
                return where
            found = _find(item, where)
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _find(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None
