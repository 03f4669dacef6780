"""Media references in video create bodies: URL syntax, data-URI contents and clip lengths."""

from __future__ import annotations

import base64
import io

from studio.core.errors import BadRequest
from studio.gateway.media.safe_fetch import check_url_syntax
from studio.gateway.media.validation import decode_media, parse_data_uri

MAX_INLINE_BYTES = 100 * 1024 * 1024
KINDS = {"image": ("image",), "video": ("video",), "audio": ("audio",), "file": ("document",)}


def check_media_url(url: str, param: str, kind: str, *, allow_asset: bool = False,
                    max_bytes: int = MAX_INLINE_BYTES) -> bytes | None:
    """Accept an http(s) URL or a base64 data URI of the right kind; return decoded inline bytes."""
    if not isinstance(url, str) or not url:
        raise BadRequest(f"{param}: must be a URL string", param=param, code="InvalidParameter")
    if url.startswith("data:"):
        decoded = decode_media(url, None, field=param, allowed_kinds=KINDS.get(kind, ("image", "video", "audio")),
                               allow_data_uri=True, max_bytes=max_bytes)
        return decoded.data
    if allow_asset and url.startswith("asset://"):
        return None
    check_url_syntax(url, field=param)
    return None


def inline_seconds(url: str) -> float | None:
    """The length of a video or audio clip given inline; None for URLs (not fetched at creation)."""
    if parse_data_uri(url) is None:
        return None
    import av  # PyAV's codec libraries cost ~30 MB of memory; load them only when needed

    raw = base64.b64decode(url.split(",", 1)[1])
    try:
        with av.open(io.BytesIO(raw)) as container:
            if container.duration:
                return container.duration / av.time_base
            stream = (container.streams.video or container.streams.audio)[0]
            if stream.duration and stream.time_base:
                return float(stream.duration * stream.time_base)
    except (av.FFmpegError, IndexError, ValueError):
        return None
    return None
