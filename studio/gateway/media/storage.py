"""Storing media once: bytes → file in the media storage → Asset row (sync; call off the hot path)."""

from __future__ import annotations

import binascii
import contextlib
import io
import mimetypes
import uuid
from collections.abc import Callable, Iterable, Iterator

from django.core.files.base import ContentFile, File
from PIL import Image

from studio.core import content_hash
from studio.core.images import ImageItem
from studio.gateway import row_writes
from studio.gateway.media.inline import b64decode_strict
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


def item_size(item: ImageItem) -> tuple[int | None, int | None]:
    """The width and height of a result image, read from the header at the start of its base64
    (the whole picture is decoded only when its header is longer than that)."""
    head = item.head()
    found = image_size(head)
    if found[0] is None and item.data is None:
        found = image_size(item.raw())
    return found


def store_bytes(
    data: bytes, mime: str, *, owner_id: int, team_id: int | None = None, generation_id: uuid.UUID | None = None,
    index: int = 0, is_input: bool = False, is_draft: bool = False, metadata: dict | None = None,
    dedupe: bool = False, asset_id: uuid.UUID | None = None, defer: list[Asset] | None = None,
) -> Asset:
    """Store ``data`` as a new asset (with ``dedupe``, the owner's asset of the same bytes if there
    is one). With ``defer`` the new asset's file is written but its row is not: the asset is added
    to ``defer`` for the caller to insert with others (``row_writes.insert_objects``)."""
    digest = content_hash.of(data)
    if dedupe:
        existing = Asset.objects.filter(owner_id=owner_id, content_hash__in=hashes_of(data, digest),
                                        is_input=is_input).first()
        if existing is not None:
            return existing
    width, height = image_size(data) if mime.startswith("image/") else (None, None)
    asset = _new_asset(mime, owner_id=owner_id, team_id=team_id, generation_id=generation_id, index=index,
                       is_input=is_input, is_draft=is_draft, metadata=metadata, asset_id=asset_id)
    asset.bytes, asset.width, asset.height, asset.content_hash = len(data), width, height, digest
    asset.file.save(_file_name(asset), WholeContent(data), save=False)
    _insert(asset, defer)
    return asset


# Whether assets stored before BLAKE3 may remain (``content_hash.LEGACY``); once none are left,
# none come back (every asset stored since has a BLAKE3 hash), so this process stops asking.
_legacy_left = True


def hashes_of(data: bytes | bytearray | memoryview, digest: str) -> list[str]:
    """The content hashes an asset of ``data`` (whose own is ``digest``) may carry: while assets
    stored before BLAKE3 remain, their SHA-256 one too. Whether any remain is one look into the
    column's index: their values sort after every BLAKE3 one (``sha256:`` after ``blake3:``)."""
    global _legacy_left
    if _legacy_left:
        _legacy_left = Asset.objects.filter(content_hash__gte=f"{content_hash.LEGACY}:").exists()
    return [digest, content_hash.legacy_of(data)] if _legacy_left else [digest]


def _insert(asset: Asset, defer: list[Asset] | None) -> None:
    if defer is None:
        row_writes.insert_objects([asset])
    else:
        defer.append(asset)


def discard_files(assets: list[Asset]) -> None:
    """Remove the files of assets whose rows were never written (a batch that failed)."""
    for asset in assets:
        if asset.file.name:
            with contextlib.suppress(Exception):  # one that cannot be removed stays an orphan, no worse
                asset.file.storage.delete(asset.file.name)


class Base64Content(File):
    """The bytes a base64 text encodes, decoded a piece at a time as the storage reads them: a
    4K picture's 11 MB never exist whole in memory next to the 15 MB of base64 they come from.
    A file system storage writes each piece as it is decoded (``chunks``); an S3 storage reads
    the file object (``read``). The length and content hash are known once it has been read.

    Clean standard base64 (what vendors send) is decoded strictly, piece by piece; at the first
    piece that is not, the rest comes from ``whole``, the tolerant decoder of the whole text (the
    pieces before it held only the standard alphabet, so they are the same bytes either way)."""

    PIECE = 1 << 20  # base64 characters per piece: a multiple of 4, so only the last one is padded

    def __init__(self, text: memoryview | str | Iterable[bytes | memoryview], whole: Callable[[], bytes]) -> None:
        super().__init__(None, name=None)
        self.text = _slices(text, self.PIECE) if isinstance(text, memoryview | str) else text
        self.whole = whole
        self.length = 0
        self.hash = content_hash.Hasher()
        self.pieces = self._decoded()
        self.head = next(self.pieces, b"")  # decoded at once: a picture's header is in it
        self.pending = b""

    def _decoded(self) -> Iterator[bytes]:
        done = 0
        for piece in self.text:
            try:
                chunk = b64decode_strict(piece)
            except binascii.Error:
                chunk = self.whole()[done:]
                if chunk:
                    yield chunk
                return
            done += len(chunk)
            yield chunk

    def _next(self) -> bytes:
        if self.head:
            chunk, self.head = self.head, b""
        else:
            chunk = next(self.pieces, b"")
        self.length += len(chunk)
        self.hash.update(chunk)
        return chunk

    def chunks(self, chunk_size: int | None = None) -> Iterator[bytes]:
        while chunk := self._next():
            yield chunk

    def read(self, size: int | None = -1) -> bytes:
        parts, have = [self.pending], len(self.pending)
        while size is None or size < 0 or have < size:
            chunk = self._next()
            if not chunk:
                break
            parts.append(chunk)
            have += len(chunk)
        data = b"".join(parts)
        if size is None or size < 0:
            self.pending = b""
            return data
        self.pending = data[size:]
        return data[:size]

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.pending = b""


def _slices(text: memoryview | str, size: int) -> Iterator[memoryview | str]:
    return (text[i:i + size] for i in range(0, len(text), size))


def store_base64(
    text: memoryview | str | Iterable[bytes | memoryview], whole: Callable[[], bytes], mime: str, *,
    owner_id: int, team_id: int | None = None,
    generation_id: uuid.UUID | None = None, index: int = 0, is_draft: bool = False, metadata: dict | None = None,
    asset_id: uuid.UUID | None = None, defer: list[Asset] | None = None,
) -> Asset:
    """Store the picture a base64 text encodes (or its pieces, each a multiple of 4 characters but
    the last), decoded piece by piece into the storage (see :class:`Base64Content`): an output as ``store_bytes`` stores it (``defer`` too), without its
    whole bytes in memory. ``whole`` decodes the whole text tolerantly (a typed error if it is
    not base64)."""
    content = Base64Content(text, whole)
    width, height = image_size(content.head) if mime.startswith("image/") else (None, None)
    asset = _new_asset(mime, owner_id=owner_id, team_id=team_id, generation_id=generation_id, index=index,
                       is_input=False, is_draft=is_draft, metadata=metadata, asset_id=asset_id)
    asset.width, asset.height = width, height
    name = _file_name(asset)
    try:
        asset.file.save(name, content, save=False)
    except Exception:
        asset.file.storage.delete(asset.file.field.generate_filename(asset, name))  # a part written
        raise
    asset.bytes, asset.content_hash = content.length, content.hash.text()
    _insert(asset, defer)
    return asset


def store_item(
    item: ImageItem, *, owner_id: int, team_id: int | None = None, generation_id: uuid.UUID | None = None,
    index: int = 0, is_draft: bool = False, metadata: dict | None = None, asset_id: uuid.UUID | None = None,
    defer: list[Asset] | None = None,
) -> Asset:
    """Store a result image: from its base64 a piece at a time when it came as base64 (the decoded
    picture never held whole beside it), else from its bytes (``defer``: as ``store_bytes``)."""
    where = {"owner_id": owner_id, "team_id": team_id, "generation_id": generation_id, "index": index,
             "is_draft": is_draft, "metadata": metadata, "asset_id": asset_id, "defer": defer}
    if item.data is None and item.b64 and len(item.b64) > Base64Content.PIECE:
        return store_base64(item.b64, item.raw, item.mime, **where)
    return store_bytes(item.raw(), item.mime, **where)


def _new_asset(
    mime: str, *, owner_id: int, team_id: int | None, generation_id: uuid.UUID | None, index: int,
    is_input: bool, is_draft: bool, metadata: dict | None, asset_id: uuid.UUID | None,
) -> Asset:
    return Asset(
        id=asset_id or uuid.uuid4(), kind=kind_of(mime), mime=mime, owner_id=owner_id, team_id=team_id,
        generation_id=generation_id, index=index, is_input=is_input, is_draft=is_draft, metadata=metadata or {},
        # Made with a team's key: it belongs in that team's gallery.
        visibility=Visibility.TEAM if team_id is not None else Visibility.PRIVATE,
    )


def _file_name(asset: Asset) -> str:
    ext = _EXTENSIONS.get(asset.mime) or (mimetypes.guess_extension(asset.mime) or ".bin").lstrip(".")
    return f"{asset.id.hex}.{ext}"
