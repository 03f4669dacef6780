"""Storing media once: bytes → file in the media storage → Asset row (sync; call off the hot path)."""

from __future__ import annotations

import hashlib
import io
import mimetypes
import uuid

from django.core.files.base import ContentFile
from PIL import Image

from studio.gateway import recording
from studio.models import Asset, AssetKind, Visibility

_EXTENSIONS = {"image/jpeg": "jpg", "image/png": "png", "image/webp": "webp", "video/mp4": "mp4"}


class WholeContent(ContentFile):
    """Bytes a storage reads in one piece: a file system storage writes them with one call, and
    the bytes are not copied 64 KB at a time on the way (reading all of an unread ``BytesIO``
    hands back the very bytes it was made from)."""

    DEFAULT_CHUNK_SIZE = 1 << 40


def kind_of(mime: str) -> str:
    major = mime.split("/", 1)[0]
    return {"image": AssetKind.IMAGE, "video": AssetKind.VIDEO, "audio": AssetKind.AUDIO}.get(major, AssetKind.FILE)


def image_size(data: bytes) -> tuple[int | None, int | None]:
    try:
        with Image.open(io.BytesIO(data)) as im:  # reads the header only
            return im.width, im.height
    except Exception:
        return None, None


def store_bytes(
    data: bytes, mime: str, *, owner_id: int, team_id: int | None = None, generation_id: uuid.UUID | None = None,
    index: int = 0, is_input: bool = False, is_draft: bool = False, metadata: dict | None = None,
    dedupe: bool = False, asset_id: uuid.UUID | None = None,
) -> Asset:
    digest = hashlib.sha256(data).hexdigest()
    if dedupe:
        existing = Asset.objects.filter(owner_id=owner_id, sha256=digest, is_input=is_input).first()
        if existing is not None:
            return existing
    width, height = image_size(data) if mime.startswith("image/") else (None, None)
    asset = Asset(
        id=asset_id or uuid.uuid4(), kind=kind_of(mime), mime=mime, bytes=len(data), width=width, height=height, sha256=digest,
        owner_id=owner_id, team_id=team_id, generation_id=generation_id, index=index, is_input=is_input, is_draft=is_draft,
        metadata=metadata or {},
        # Made with a team's key: it belongs in that team's gallery.
        visibility=Visibility.TEAM if team_id is not None else Visibility.PRIVATE,
    )
    ext = _EXTENSIONS.get(mime) or (mimetypes.guess_extension(mime) or ".bin").lstrip(".")
    asset.file.save(f"{asset.id.hex}.{ext}", WholeContent(data), save=False)
    recording.insert_objects([asset])
    return asset
