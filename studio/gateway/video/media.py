"""Copying a finished task's video and last frame into our storage (bounded in size and time).

Upstream result URLs expire after 24 hours; the records then serve our copies. The video is
streamed to a temporary file while hashing, so a large file never sits in memory whole.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.core.files import File

from studio.core import content_hash
from studio.core.video_states import UpstreamVideoState
from studio.gateway.media.storage import image_size
from studio.gateway.media.validation import sniff_mime
from studio.gateway.video import settings as video_settings
from studio.models import Asset, AssetKind, Visibility
from studio.providers.http import get_client

logger = logging.getLogger(__name__)


class MirrorError(Exception):
    pass


@dataclass
class Mirrored:
    video: Asset | None = None
    last_frame: Asset | None = None
    error: str = ""


async def mirror(task_id: str, user_id: int, team_id: int | None, state: UpstreamVideoState) -> Mirrored:
    result = Mirrored()
    errors = []
    for url, kind in ((state.video_url, "video"), (state.last_frame_url, "last_frame")):
        if not url:
            continue
        try:
            asset = await _copy(url, kind, task_id, user_id, team_id)
        except MirrorError as exc:
            errors.append(f"{kind}: {exc}")
            logger.warning("mirroring the %s of video task %s failed: %s", kind, task_id, exc)
            continue
        setattr(result, kind, asset)
    result.error = "; ".join(errors)
    return result


async def _copy(url: str, kind: str, task_id: str, user_id: int, team_id: int | None) -> Asset:
    limit = video_settings.mirror_max_bytes()
    spool = tempfile.SpooledTemporaryFile(max_size=8 * 1024 * 1024)  # noqa: SIM115 - closed by _store or on error
    digest = content_hash.Hasher()
    size = 0
    head = b""
    try:
        async with asyncio.timeout(video_settings.mirror_timeout()):
            async with get_client().stream("GET", url) as response:
                if response.status_code != 200:
                    raise MirrorError(f"download answered HTTP {response.status_code}")
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > limit:
                        raise MirrorError(f"larger than the {limit} bytes accepted")
                    if len(head) < 512:
                        head += chunk[:512]
                    digest.update(chunk)
                    spool.write(chunk)
    except TimeoutError:
        spool.close()
        raise MirrorError("download timed out") from None
    except MirrorError:
        spool.close()
        raise
    except Exception as exc:  # transport errors of any kind: keep the upstream URL instead
        spool.close()
        raise MirrorError(f"download failed ({type(exc).__name__})") from exc
    mime = sniff_mime(head) or ""
    expected = "video/" if kind == "video" else "image/"
    if not mime.startswith(expected):
        spool.close()
        raise MirrorError(f"the downloaded file is not {'a video' if kind == 'video' else 'an image'} ({mime or 'unknown'})")
    return await sync_to_async(_store)(spool, mime, size, digest.text(), kind, task_id, user_id, team_id)


def _store(spool, mime: str, size: int, digest: str, kind: str, task_id: str, user_id: int,
           team_id: int | None) -> Asset:
    try:
        width = height = None
        if kind == "last_frame":
            spool.seek(0)
            width, height = image_size(spool.read())
        asset = Asset(kind=AssetKind.VIDEO if kind == "video" else AssetKind.IMAGE, mime=mime, bytes=size,
                      width=width, height=height, content_hash=digest, owner_id=user_id, team_id=team_id,
                      visibility=Visibility.TEAM if team_id is not None else Visibility.PRIVATE,
                      metadata={"video_task": task_id, "role": kind})
        spool.seek(0)
        ext = "mp4" if kind == "video" else ("png" if mime == "image/png" else mime.split("/")[-1])
        asset.file.save(f"{asset.id.hex}.{ext}", File(spool), save=False)
        asset.save()
        return asset
    finally:
        spool.close()


def discard(mirrored: Mirrored) -> None:
    """Remove copies that lost a race (another poller finished the task first)."""
    for asset in (mirrored.video, mirrored.last_frame):
        if asset is not None:
            asset.file.delete(save=False)
            asset.delete()
