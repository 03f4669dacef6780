"""``manage.py rotate_credentials`` re-encrypts every upstream credential with the first key."""

from __future__ import annotations

import io

import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command

from studio.models import Upstream
from tests.core.test_crypto import legacy_token

pytestmark = pytest.mark.django_db


def make(name: str, credential: str = "", token: str = "") -> Upstream:
    upstream = Upstream(name=name, protocol="openai", base_url="https://vendor.test/v1")
    if credential:
        upstream.credential = credential
    if token:
        upstream.credential_encrypted = token
    upstream.save()
    return upstream


def test_every_credential_moves_to_the_new_first_key_and_still_reads_the_same(settings):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.STUDIO_CREDENTIAL_KEYS = [old]
    make("a", credential="sk-a")
    make("b", token=legacy_token(settings.SECRET_KEY, "sk-b"))
    make("empty")
    settings.STUDIO_CREDENTIAL_KEYS = [new, old]
    out = io.StringIO()
    call_command("rotate_credentials", stdout=out)
    assert "re-encrypted 2 credential(s)" in out.getvalue()
    settings.STUDIO_CREDENTIAL_KEYS = [new]  # the old key can go now
    assert Upstream.objects.get(name="a").credential == "sk-a"
    assert Upstream.objects.get(name="b").credential == "sk-b"
    assert Upstream.objects.get(name="empty").credential_encrypted == ""


def test_a_credential_no_key_decrypts_stops_the_rotation_and_changes_nothing(settings):
    lost, kept = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.STUDIO_CREDENTIAL_KEYS = [kept]
    make("fine", credential="sk-fine")
    before = Upstream.objects.get(name="fine").credential_encrypted
    make("orphan", token=Fernet(lost.encode()).encrypt(b"sk-orphan").decode())
    new = Fernet.generate_key().decode()
    settings.STUDIO_CREDENTIAL_KEYS = [new, kept]
    with pytest.raises(CommandError, match="orphan"):
        call_command("rotate_credentials", stdout=io.StringIO())
    assert Upstream.objects.get(name="fine").credential_encrypted == before
