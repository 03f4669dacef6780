"""Signed public links to stored media: ``/m/<token>``, no API key or login needed.

The token is the asset id signed with the project's secret and a timestamp, so it cannot be
guessed and stops working ``STUDIO_MEDIA_URL_TTL`` seconds after it was issued (the operator's
setting, read when the link is used).
"""

from __future__ import annotations

import time
import uuid

from django.conf import settings
from django.core import signing
from django.urls import reverse

from studio.core.errors import NotFound

SALT = "studio.public-media"


def _signer() -> signing.TimestampSigner:
    return signing.TimestampSigner(salt=SALT)


def signed_path(asset_id: uuid.UUID) -> str:
    return reverse("public-media", kwargs={"token": _signer().sign(asset_id.hex)})


def signed_url(asset_id: uuid.UUID) -> str:
    return settings.PUBLIC_BASE_URL + signed_path(asset_id)


def read(token: str) -> tuple[uuid.UUID, float]:
    """The asset id a token names and the link's age in seconds; ``NotFound`` when forged,
    malformed or expired."""
    try:
        value = _signer().unsign(token, max_age=settings.STUDIO_MEDIA_URL_TTL)
        issued = signing.b62_decode(token.rsplit(":", 2)[1])
        return uuid.UUID(hex=value), max(time.time() - issued, 0.0)
    except (signing.BadSignature, ValueError, IndexError):  # SignatureExpired is a BadSignature
        raise NotFound("this media link is invalid or has expired") from None
