"""Upstream credentials at rest: they round-trip, are not stored in the clear, are encrypted with
keys of their own that can be rotated, and what earlier versions stored still decrypts."""

from __future__ import annotations

import base64
import hashlib

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

from studio.core import crypto


def test_round_trip_without_plaintext_in_the_token():
    token = crypto.encrypt("sk-vendor-secret")
    assert "sk-vendor-secret" not in token
    assert crypto.decrypt(token) == "sk-vendor-secret"


def test_each_encryption_differs_but_decrypts_the_same():
    a, b = crypto.encrypt("same"), crypto.encrypt("same")
    assert a != b and crypto.decrypt(a) == crypto.decrypt(b) == "same"


def test_a_changed_secret_key_is_named(settings):
    token = crypto.encrypt("sk-vendor-secret")
    settings.SECRET_KEY = settings.SECRET_KEY + "-rotated"
    with pytest.raises(ValueError, match="SECRET_KEY"):
        crypto.decrypt(token)


def legacy_token(secret_key: str, plaintext: str) -> str:
    """A credential as earlier versions stored it (a SHA-256 digest of SECRET_KEY as the key)."""
    key = base64.urlsafe_b64encode(hashlib.sha256(b"studio-upstream-credentials:" + secret_key.encode()).digest())
    return Fernet(key).encrypt(plaintext.encode()).decode()


def test_without_configured_keys_the_key_is_derived_from_the_secret_key(settings):
    settings.STUDIO_CREDENTIAL_KEYS = []
    token = crypto.encrypt("sk-vendor")
    assert Fernet(crypto.derived_key(settings.SECRET_KEY)).decrypt(token.encode()) == b"sk-vendor"
    assert crypto.decrypt(token) == "sk-vendor"


def test_the_first_configured_key_encrypts_and_every_one_decrypts(settings):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.STUDIO_CREDENTIAL_KEYS = [old]
    written_before = crypto.encrypt("sk-old")
    settings.STUDIO_CREDENTIAL_KEYS = [new, old]
    written_after = crypto.encrypt("sk-new")
    assert Fernet(new.encode()).decrypt(written_after.encode()) == b"sk-new"
    assert crypto.decrypt(written_before) == "sk-old"
    settings.STUDIO_CREDENTIAL_KEYS = [new]
    with pytest.raises(ValueError, match="STUDIO_CREDENTIAL_KEYS"):
        crypto.decrypt(written_before)


def test_credentials_stored_by_earlier_versions_still_decrypt_and_rotate_to_the_first_key(settings):
    key = Fernet.generate_key().decode()
    settings.STUDIO_CREDENTIAL_KEYS = [key]
    old = legacy_token(settings.SECRET_KEY, "sk-from-before")
    assert crypto.decrypt(old) == "sk-from-before"
    rotated = crypto.rotate(old)
    assert Fernet(key.encode()).decrypt(rotated.encode()) == b"sk-from-before"


def test_a_malformed_key_is_a_configuration_error_saying_how_to_make_one(settings):
    settings.STUDIO_CREDENTIAL_KEYS = ["not-a-fernet-key"]
    with pytest.raises(ImproperlyConfigured, match="Fernet.generate_key"):
        crypto.encrypt("x")


def test_a_seal_opens_only_for_its_purpose_and_key(settings):
    sealed = crypto.seal(b"the plan", "thinking")
    assert "the plan" not in sealed and crypto.unseal(sealed, "thinking") == b"the plan"
    assert crypto.unseal(sealed, "other") is None
    middle = len(sealed) // 2
    changed = sealed[:middle] + ("A" if sealed[middle] != "A" else "B") + sealed[middle + 1:]
    for wrong in (changed, "not a token", "gAAAAAé", None, 7):
        assert crypto.unseal(wrong, "thinking") is None
    settings.SECRET_KEY = "another secret key for this test, long enough to be one"
    assert crypto.unseal(sealed, "thinking") is None
    # Any seal has a seal's form, whether or not it opens; other values have not.
    assert crypto.sealed_form(sealed) and crypto.sealed_form(changed)
    assert not any(crypto.sealed_form(other) for other in ("not a token", "EqQBCkgIARABGAIiQL2x", None, 7))
