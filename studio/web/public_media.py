"""Signed public links to stored media: ``/m/<token>``, no API key or login needed.

The token is the asset id signed with the project's secret and a timestamp, so it cannot be
guessed and stops working ``STUDIO_MEDIA_URL_TTL`` seconds after it was issued (the operator's
setting, read when the link is used). Files are streamed in chunks, never read whole.
"""

from __future__ import annotations

import asyncio
import time
import uuid

from django.conf import settings
from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse

from studio.models import Asset

from .files import stream_file

SALT = "studio.public-media"
# Outputs are written just after the response that names them; a client quick enough to ask
# before the write lands waits this long rather than getting a 404.
ARRIVAL_WAIT = 10.0


def _signer() -> signing.TimestampSigner:
    return signing.TimestampSigner(salt=SALT)


def signed_path(asset_id: uuid.UUID) -> str:
    return reverse("public-media", kwargs={"token": _signer().sign(asset_id.hex)})


def signed_url(asset_id: uuid.UUID) -> str:
    return settings.PUBLIC_BASE_URL + signed_path(asset_id)


def asset_id_from(token: str) -> uuid.UUID:
    """The asset id a token names; ``Http404`` when forged, malformed or expired."""
    try:
        value = _signer().unsign(token, max_age=settings.STUDIO_MEDIA_URL_TTL)
        return uuid.UUID(hex=value)
    except (signing.BadSignature, ValueError):  # SignatureExpired is a BadSignature
        raise Http404("this media link is invalid or has expired") from None


async def public_media(request: HttpRequest, token: str) -> HttpResponse:
    asset_id = asset_id_from(token)
    deadline = time.monotonic() + ARRIVAL_WAIT
    asset = await Asset.objects.filter(id=asset_id).afirst()
    while asset is None and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        asset = await Asset.objects.filter(id=asset_id).afirst()
    if asset is None:
        raise Http404("no such media")
    return stream_file(request, asset.file.storage, asset.file.name, asset.bytes, asset.mime,
                       cache_control=f"private, max-age={min(settings.STUDIO_MEDIA_URL_TTL, 86400)}")
