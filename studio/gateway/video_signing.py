"""Signatures the video engine hands out: upstream callback addresses, media URLs, client webhooks."""

from __future__ import annotations

import hashlib
import hmac

from django.conf import settings


def _sign(purpose: str, value: str) -> str:
    key = hashlib.sha256(f"studio-video:{purpose}:{settings.SECRET_KEY}".encode()).digest()
    return hmac.new(key, value.encode(), hashlib.sha256).hexdigest()


def callback_signature(task_id: str) -> str:
    return _sign("callback", task_id)


def callback_url(task_id: str) -> str:
    """Our signed address the upstream posts task records to (PUBLIC_BASE_URL + task id + HMAC)."""
    return f"{settings.PUBLIC_BASE_URL}/v1/video/callbacks/{task_id}/{callback_signature(task_id)}"


def callback_valid(task_id: str, signature: str | None) -> bool:
    return bool(signature) and hmac.compare_digest(callback_signature(task_id), signature or "")


def file_signature(task_id: str, kind: str) -> str:
    return _sign("file", f"{task_id}:{kind}")[:40]


def file_path(task_id: str, kind: str) -> str:
    return f"/video/files/{task_id}/{kind}?sig={file_signature(task_id, kind)}"


def file_url(task_id: str, kind: str) -> str:
    """A stable URL of a mirrored file (``video.mp4`` or ``last_frame.png``); it outlives the upstream's."""
    return settings.PUBLIC_BASE_URL + file_path(task_id, kind)


def file_valid(task_id: str, kind: str, signature: str | None) -> bool:
    return bool(signature) and hmac.compare_digest(file_signature(task_id, kind), signature or "")


def webhook_secret(api_key_id: int | None, user_id: int) -> str:
    """The per-key secret that signs webhooks relayed to a client's callback_url."""
    return "whsec_" + _sign("webhook", f"key:{api_key_id}" if api_key_id else f"user:{user_id}")[:48]


def webhook_signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
