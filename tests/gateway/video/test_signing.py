"""Video signatures: callback addresses, expiring file links, webhook secrets; key rotation."""

from __future__ import annotations

import time

from django.core import signing

from studio.gateway.video import signing as video_signing


def test_callback_signature_checks_task_and_signature():
    signature = video_signing.callback_signature("vt-1")
    assert video_signing.callback_valid("vt-1", signature)
    assert not video_signing.callback_valid("vt-2", signature)
    assert not video_signing.callback_valid("vt-1", signature[:-2] + "xx")
    assert not video_signing.callback_valid("vt-1", "")
    assert not video_signing.callback_valid("vt-1", None)


def test_callback_url_carries_the_signature(settings):
    settings.PUBLIC_BASE_URL = "https://gw.example"
    url = video_signing.callback_url("vt-9")
    assert url.startswith("https://gw.example/v1/video/callbacks/vt-9/")
    assert video_signing.callback_valid("vt-9", url.rsplit("/", 1)[1])


def test_file_link_names_one_task_and_kind():
    token = video_signing.file_path("vt-1", "video.mp4").split("?sig=", 1)[1]
    assert video_signing.file_valid("vt-1", "video.mp4", token)
    assert not video_signing.file_valid("vt-1", "last_frame.png", token)
    assert not video_signing.file_valid("vt-2", "video.mp4", token)
    assert not video_signing.file_valid("vt-1", "video.mp4", token[:-3] + "abc")
    assert not video_signing.file_valid("vt-1", "video.mp4", None)


def test_file_link_expires_after_the_media_ttl(settings, monkeypatch):
    settings.STUDIO_MEDIA_URL_TTL = 60
    token = video_signing.file_token("vt-1", "video.mp4")
    assert video_signing.file_valid("vt-1", "video.mp4", token)
    later = time.time() + 61
    monkeypatch.setattr(signing.time, "time", lambda: later)
    assert not video_signing.file_valid("vt-1", "video.mp4", token)


def test_key_rotation_invalidates_old_links_unless_kept_as_fallback(settings):
    settings.SECRET_KEY = "first-key-" + "x" * 50
    token = video_signing.file_token("vt-1", "video.mp4")
    callback = video_signing.callback_signature("vt-1")
    secret = video_signing.webhook_secret(7, 1)

    settings.SECRET_KEY = "second-key-" + "y" * 50
    settings.SECRET_KEY_FALLBACKS = ["first-key-" + "x" * 50]
    assert video_signing.file_valid("vt-1", "video.mp4", token)  # graceful rotation window
    assert video_signing.callback_valid("vt-1", callback)

    settings.SECRET_KEY_FALLBACKS = []
    assert not video_signing.file_valid("vt-1", "video.mp4", token)
    assert not video_signing.callback_valid("vt-1", callback)
    assert video_signing.webhook_secret(7, 1) != secret


def test_webhook_secret_is_per_key_and_signature_is_hmac_sha256():
    a, b, user = video_signing.webhook_secret(1, 5), video_signing.webhook_secret(2, 5), video_signing.webhook_secret(None, 5)
    assert len({a, b, user}) == 3 and a.startswith("whsec_")
    signature = video_signing.webhook_signature(a, b'{"x":1}')
    assert signature.startswith("sha256=") and len(signature) == 7 + 64
    assert video_signing.webhook_signature(a, b'{"x":2}') != signature


def test_the_key_decides_the_webhook_secret_not_the_user():
    assert video_signing.webhook_secret(7, 1) == video_signing.webhook_secret(7, 2)


def test_a_client_can_check_the_webhook_signature_with_its_secret():
    import hashlib
    import hmac

    body = b'{"id":"cgt-1","status":"succeeded"}'
    expected = hmac.new(b"whsec_abc", body, hashlib.sha256).hexdigest()
    assert video_signing.webhook_signature("whsec_abc", body) == "sha256=" + expected


def test_file_url_is_the_public_base_plus_the_signed_path(settings):
    settings.PUBLIC_BASE_URL = "https://gw.example"
    url = video_signing.file_url("vt-3", "last_frame.png")
    assert url.startswith("https://gw.example/video/files/vt-3/last_frame.png?sig=")
    assert video_signing.file_valid("vt-3", "last_frame.png", url.split("?sig=", 1)[1])
