"""Encryption at rest for upstream credentials (Fernet with a key derived from SECRET_KEY)."""

from __future__ import annotations

import base64
import hashlib
from functools import cache

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


@cache
def _fernet(secret_key: str) -> Fernet:
    digest = hashlib.sha256(b"studio-upstream-credentials:" + secret_key.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def encrypt(plaintext: str) -> str:
    return _fernet(settings.SECRET_KEY).encrypt(plaintext.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return _fernet(settings.SECRET_KEY).decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise ValueError("credential cannot be decrypted: was SECRET_KEY changed?") from exc
