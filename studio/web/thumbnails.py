"""Small WebP thumbnails for the gallery grid, made once per asset on first request.

A grid of 4K PNGs would ship hundreds of megabytes; a 320 px WebP is a few kilobytes. The first
request makes it and stores it in ``Asset.thumbnail``; every later one streams the stored file.
Videos get a thumbnail of their first frame (decoded with PyAV).
"""

from __future__ import annotations

import io
import logging
import uuid

from django.core.files.base import ContentFile
from django.http import Http404, HttpRequest, HttpResponse
from PIL import Image, ImageOps

from studio.gateway import permissions as access
from studio.models import Asset, AssetKind
from studio.web.files import stream_file

logger = logging.getLogger(__name__)

THUMB_EDGE = 320
THUMB_QUALITY = 78
THUMB_CACHE = "private, max-age=31536000, immutable"  # a thumbnail never changes once made


def _first_video_frame(asset: Asset) -> Image.Image:
    import av

    with asset.file.storage.open(asset.file.name, "rb") as handle, av.open(handle) as container:
        for frame in container.decode(video=0):
            return frame.to_image()
    raise ValueError("the video has no frames")


def _source_image(asset: Asset) -> Image.Image:
    if asset.kind == AssetKind.VIDEO:
        return _first_video_frame(asset)
    with asset.file.storage.open(asset.file.name, "rb") as handle:
        image = Image.open(handle)
        image.draft("RGB", (THUMB_EDGE * 2, THUMB_EDGE * 2))  # JPEG: decode at a reduced scale
        image.load()
        return image


def render_thumbnail(asset: Asset) -> bytes:
    image = ImageOps.exif_transpose(_source_image(asset))
    image.thumbnail((THUMB_EDGE, THUMB_EDGE), Image.Resampling.LANCZOS)
    if image.mode not in ("RGB", "RGBA"):
        image = image.convert("RGBA" if "A" in image.getbands() or image.mode == "P" else "RGB")
    out = io.BytesIO()
    image.save(out, "WEBP", quality=THUMB_QUALITY, method=4)
    return out.getvalue()


def ensure_thumbnail(asset: Asset) -> bool:
    """Make and store the thumbnail unless it exists; False when the file cannot be thumbnailed."""
    if asset.thumbnail:
        return True
    if asset.kind not in (AssetKind.IMAGE, AssetKind.VIDEO):
        return False
    try:
        data = render_thumbnail(asset)
    except Exception:  # a corrupt or unsupported file: the grid shows a placeholder instead
        logger.warning("could not make a thumbnail for asset %s", asset.id, exc_info=True)
        return False
    asset.thumbnail.save(f"{asset.id.hex}.webp", ContentFile(data), save=False)
    # Only this column: a concurrent star or move must not be overwritten.
    Asset.objects.filter(id=asset.id).update(thumbnail=asset.thumbnail.name)
    return True


def serve_thumbnail(request: HttpRequest, asset: Asset) -> HttpResponse:
    if not ensure_thumbnail(asset):
        raise Http404("no thumbnail for this asset")
    storage = asset.thumbnail.storage
    return stream_file(request, storage, asset.thumbnail.name, storage.size(asset.thumbnail.name), "image/webp",
                       cache_control=THUMB_CACHE)


def asset_thumbnail(request: HttpRequest, asset_id: uuid.UUID) -> HttpResponse:
    """``/assets/<id>/thumb``: the same permission as the full file."""
    asset = access.visible_asset_or_404(request.user, asset_id)
    return serve_thumbnail(request, asset)
