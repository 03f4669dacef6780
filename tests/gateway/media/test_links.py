"""Signed public media links: what a token names, its age, expiry and forgery."""

from __future__ import annotations

import time
import uuid

import pytest
from django.core import signing

from studio.core.errors import NotFound
from studio.gateway.media import links


def _token(url: str) -> str:
    return url.rsplit("/m/", 1)[1]


def test_a_link_names_its_asset_and_is_young(settings):
    settings.PUBLIC_BASE_URL = "https://gw.example"
    asset = uuid.uuid4()
    url = links.signed_url(asset)
    assert url.startswith("https://gw.example/m/")
    named, age = links.read(_token(url))
    assert named == asset and 0 <= age < 5


def test_age_grows_with_time(monkeypatch):
    token = _token(links.signed_path(uuid.uuid4()))
    later = time.time() + 30
    monkeypatch.setattr(time, "time", lambda: later)
    assert links.read(token)[1] >= 29


@pytest.mark.parametrize("mangle", [
    lambda t: t[:-2] + ("aa" if not t.endswith("aa") else "bb"),  # forged signature
    lambda t: uuid.uuid4().hex + t[32:],  # another asset, same signature
    lambda t: "not-a-token",
    lambda t: "",
])
def test_forged_or_malformed_links_are_not_found(mangle):
    with pytest.raises(NotFound):
        links.read(mangle(_token(links.signed_path(uuid.uuid4()))))


def test_links_expire_after_the_ttl(settings, monkeypatch):
    settings.STUDIO_MEDIA_URL_TTL = 60
    token = _token(links.signed_path(uuid.uuid4()))
    later = time.time() + 61
    monkeypatch.setattr(signing.time, "time", lambda: later)
    with pytest.raises(NotFound):
        links.read(token)


def test_a_key_rotation_invalidates_old_links(settings):
    settings.SECRET_KEY = "a" * 60
    token = _token(links.signed_path(uuid.uuid4()))
    settings.SECRET_KEY = "b" * 60
    with pytest.raises(NotFound):
        links.read(token)


def test_a_token_signed_for_another_purpose_is_refused():
    foreign = signing.TimestampSigner(salt="something-else").sign(uuid.uuid4().hex)
    with pytest.raises(NotFound):
        links.read(foreign)


def test_a_well_signed_value_that_is_not_an_asset_id_is_not_found():
    with pytest.raises(NotFound):
        links.read(signing.TimestampSigner(salt=links.SALT).sign("not-a-uuid"))


def test_the_ttl_is_the_setting_when_the_link_is_used(settings, monkeypatch):
    settings.STUDIO_MEDIA_URL_TTL = 60
    asset = uuid.uuid4()
    token = _token(links.signed_path(asset))
    later = time.time() + 120
    monkeypatch.setattr(signing.time, "time", lambda: later)
    with pytest.raises(NotFound):
        links.read(token)
    settings.STUDIO_MEDIA_URL_TTL = 3600  # the operator lengthened it: the same link works again
    assert links.read(token)[0] == asset
