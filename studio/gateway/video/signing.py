"""Signatures the video engine hands out: upstream callback addresses, media URLs, client webhooks.

All of them use Django's signing with a salt per purpose, so they follow ``SECRET_KEY`` and
``SECRET_KEY_FALLBACKS``: rotating the key (and dropping the old one from the fallbacks)
invalidates every old link and callback address at once. Media links also expire:
``STUDIO_MEDIA_URL_TTL`` seconds after they were issued (a query issues fresh ones).
"""

from __future__ import annotations

import hashlib
import hmac

from django.conf import settings
from django.core import signing

_CALLBACK_SALT = "studio.video.callback"
_FILE_SALT = "studio.video.file"


def _callback_signer() -> signing.Signer:
    # Made per use: a Signer keeps the key it was made with, and settings may rotate.
    return signing.Signer(salt=_CALLBACK_SALT)


def callback_signature(task_id: str) -> str:
    return _callback_signer().signature(task_id)


def callback_url(task_id: str) -> str:
    """Our signed address the upstream posts task records to (PUBLIC_BASE_URL + task id + signature)."""
    return f"{settings.PUBLIC_BASE_URL}/v1/video/callbacks/{task_id}/{callback_signature(task_id)}"


def callback_valid(task_id: str, signature: str | None) -> bool:
    if not signature:
        return False
    signer = _callback_signer()
    try:
        return signer.unsign(f"{task_id}{signer.sep}{signature}") == task_id
    except signing.BadSignature:
        return False


def file_token(task_id: str, kind: str) -> str:
    return signing.dumps([task_id, kind], salt=_FILE_SALT, compress=False)


def file_path(task_id: str, kind: str) -> str:
    return f"/video/files/{task_id}/{kind}?sig={file_token(task_id, kind)}"


def file_url(task_id: str, kind: str) -> str:
    """A URL of a mirrored file (``video.mp4`` or ``last_frame.png``); it outlives the upstream's
    and expires ``STUDIO_MEDIA_URL_TTL`` seconds after it was issued."""
    return settings.PUBLIC_BASE_URL + file_path(task_id, kind)


def file_valid(task_id: str, kind: str, token: str | None) -> bool:
    if not token:
        return False
    try:
        value = signing.loads(token, salt=_FILE_SALT, max_age=settings.STUDIO_MEDIA_URL_TTL)
    except signing.BadSignature:  # forged, malformed or expired (SignatureExpired is a BadSignature)
        return False
    return value == [task_id, kind]


def _derived(purpose: str, value: str) -> str:
    # HMAC keyed by the signing machinery's own key derivation, so a key rotation changes it too.
    return signing.Signer(salt=f"studio.video.{purpose}").signature(value)


def webhook_secret(api_key_id: int | None, user_id: int) -> str:
    """The per-key secret that signs webhooks relayed to a client's callback_url."""
    return "whsec_" + _derived("webhook", f"key:{api_key_id}" if api_key_id else f"user:{user_id}")[:48]


def webhook_signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
