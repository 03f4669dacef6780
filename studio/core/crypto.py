"""Encryption at rest for upstream credentials: Fernet keys of their own, rotatable.

``STUDIO_CREDENTIAL_KEYS`` lists Fernet keys, comma-separated: the first encrypts, every one
decrypts, so a new key is put first and the old ones stay listed until ``manage.py
rotate_credentials`` has re-encrypted every credential with the new one. Without it the key is
derived from ``SECRET_KEY`` with HKDF. Credentials written by earlier versions (a SHA-256 digest
of ``SECRET_KEY``) still decrypt, and rotating re-encrypts them with the first key.

``seal`` / ``unseal`` encrypt what the gateway hands a client to give back unchanged (a thinking
block's text inside its ``signature``, Claude's signed thinking inside a reasoning item's
``encrypted_content``), under a Fernet key HKDF derives from ``SECRET_KEY`` for each purpose.
"""

from __future__ import annotations

import base64
import hashlib
import zlib
from functools import cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


def derived_key(secret_key: str) -> bytes:
    """The Fernet key HKDF derives from ``secret_key`` (used when no key is configured)."""
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"studio-gateway", info=b"upstream-credentials")
    return base64.urlsafe_b64encode(hkdf.derive(secret_key.encode()))


def _legacy_key(secret_key: str) -> bytes:
    digest = hashlib.sha256(b"studio-upstream-credentials:" + secret_key.encode()).digest()
    return base64.urlsafe_b64encode(digest)


@cache
def _fernet(configured: tuple[str, ...], secret_key: str) -> MultiFernet:
    try:
        keys = [Fernet(key.encode()) for key in configured]
    except ValueError as exc:
        raise ImproperlyConfigured(
            "STUDIO_CREDENTIAL_KEYS must list Fernet keys (32 url-safe base64-encoded bytes each), "
            "comma-separated; make one with: python -c 'from cryptography.fernet import Fernet; "
            "print(Fernet.generate_key().decode())'"
        ) from exc
    if not keys:
        keys = [Fernet(derived_key(secret_key))]
    keys.append(Fernet(_legacy_key(secret_key)))  # decrypts what earlier versions wrote
    return MultiFernet(keys)


def _current() -> MultiFernet:
    return _fernet(tuple(settings.STUDIO_CREDENTIAL_KEYS), settings.SECRET_KEY)


def encrypt(plaintext: str) -> str:
    return _current().encrypt(plaintext.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return _current().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise ValueError(
            "credential cannot be decrypted: is its key missing from STUDIO_CREDENTIAL_KEYS, or was SECRET_KEY changed?"
        ) from exc


def rotate(token: str) -> str:
    """``token`` re-encrypted with the first key (it must decrypt with one of the keys)."""
    try:
        return _current().rotate(token.encode()).decode()
    except InvalidToken as exc:
        raise ValueError("credential cannot be decrypted with any configured key") from exc


@cache
def _sealer(secret_key: str, purpose: str) -> Fernet:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"studio-gateway", info=b"sealed:" + purpose.encode())
    return Fernet(base64.urlsafe_b64encode(hkdf.derive(secret_key.encode())))


def seal(data: bytes, purpose: str) -> str:
    """``data`` compressed, encrypted and authenticated for ``purpose``: a Fernet token."""
    return _sealer(settings.SECRET_KEY, purpose).encrypt(zlib.compress(data)).decode()


def sealed_form(value: object) -> bool:
    """Whether ``value`` has the form of a seal (a Fernet token: its version byte and the high bytes
    of its time spell ``gAAAAA``), whether or not it opens."""
    return isinstance(value, str) and value.startswith("gAAAAA")


def unseal(token: object, purpose: str) -> bytes | None:
    """What ``seal`` sealed for ``purpose``; None for anything else (not a token, changed, made for
    another purpose or under another key)."""
    if not isinstance(token, str) or not token.isascii():
        return None
    try:
        return zlib.decompress(_sealer(settings.SECRET_KEY, purpose).decrypt(token.encode()))
    except InvalidToken:
        return None
