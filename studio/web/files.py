"""Serving stored media: streamed in chunks off the event loop, with HTTP Range for seeking.

Django's FileResponse is a synchronous iterator, which under ASGI is read whole into memory
before sending; a 200 MB video must not be. Range requests (``bytes=a-b``, ``bytes=a-``,
``bytes=-n``) answer 206 so browsers can seek in videos.

With object storage (``STUDIO_S3_BUCKET``) files are streamed through here too, rather than
redirected to presigned bucket URLs: every byte passes the same access check (revoking a share
or leaving a team takes effect at once, while a presigned URL stays valid until it expires), the
URLs clients see do not change, and the bucket needs no public endpoint or CORS. A range is one
ranged GET on the object, so seeking in a large video reads only what is asked for.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Protocol

from django.core.files.storage import Storage
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

CHUNK = 256 * 1024
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


def parse_range(header: str | None, size: int) -> tuple[int, int] | None:
    """The one byte range asked for, inclusive; None for no (or an unsupported multi-) range."""
    if not header:
        return None
    match = _RANGE.match(header.strip())
    if match is None:
        return None
    first, last = match.groups()
    if first == "" and last == "":
        return None
    if first == "":
        length = int(last)
        return (max(size - length, 0), size - 1) if length else (size, size - 1)
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    return start, end


class _Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...

    def close(self) -> None: ...


def open_range(storage: Storage, name: str, start: int, length: int) -> _Readable:
    """A reader positioned at ``start`` (blocking; call in a thread)."""
    from storages.backends.s3 import S3Storage
    from storages.utils import clean_name

    if isinstance(storage, S3Storage):
        key = storage._normalize_name(clean_name(name))
        last = start + max(length, 1) - 1
        return storage.bucket.Object(key).get(Range=f"bytes={start}-{last}")["Body"]
    handle = storage.open(name, "rb")
    if start:
        handle.seek(start)
    return handle


async def _chunks(storage: Storage, name: str, start: int, length: int) -> AsyncIterator[bytes]:
    if length <= 0:
        return
    handle = await asyncio.to_thread(open_range, storage, name, start, length)
    try:
        remaining = length
        while remaining > 0:
            chunk = await asyncio.to_thread(handle.read, min(CHUNK, remaining))
            if not chunk:
                break
            remaining -= len(chunk)
            yield chunk
    finally:
        await asyncio.to_thread(handle.close)


def stream_file(request: HttpRequest, storage: Storage, name: str, size: int, content_type: str,
                *, cache_control: str = "private, max-age=86400", filename: str | None = None) -> HttpResponse:
    byte_range = parse_range(request.headers.get("Range"), size)
    if byte_range is not None and (byte_range[0] >= size or byte_range[0] > byte_range[1]):
        response = HttpResponse(status=416)
        response["Content-Range"] = f"bytes */{size}"
        return response
    start, end = byte_range or (0, size - 1)
    length = max(end - start + 1, 0)
    response = StreamingHttpResponse(_chunks(storage, name, start, length), content_type=content_type,
                                     status=206 if byte_range else 200)
    response["Content-Length"] = str(length)
    response["Accept-Ranges"] = "bytes"
    response["Cache-Control"] = cache_control
    if byte_range:
        response["Content-Range"] = f"bytes {start}-{end}/{size}"
    if filename:
        response["Content-Disposition"] = f'inline; filename="{filename}"'
    return response
