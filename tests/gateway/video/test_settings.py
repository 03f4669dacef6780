"""Video engine knobs: Django settings first, then the environment, then defaults."""

from __future__ import annotations

import pytest

from studio.gateway.video import settings as video_settings

NAMES = ("STUDIO_VIDEO_FIRST_POLL", "STUDIO_VIDEO_POLL_SCALE", "STUDIO_VIDEO_LEASE_SECONDS", "STUDIO_VIDEO_CALLBACKS",
         "STUDIO_VIDEO_MIRROR_MAX_BYTES", "STUDIO_VIDEO_MIRROR_TIMEOUT", "STUDIO_VIDEO_WEBHOOK_BACKOFF")


@pytest.fixture
def unset(settings, monkeypatch):
    for name in NAMES:
        if hasattr(settings, name):
            delattr(settings, name)
        monkeypatch.delenv(name, raising=False)
    return settings


def test_defaults(unset) -> None:
    assert video_settings.first_poll_seconds() == 2.0
    assert video_settings.poll_schedule() == [2.0, 3.0, 5.0, 8.0, 12.0]
    assert video_settings.lease_seconds() == 60.0
    assert video_settings.callbacks_enabled() is True
    assert video_settings.mirror_max_bytes() == 512 * 1024 * 1024
    assert video_settings.mirror_timeout() == 120.0
    assert video_settings.webhook_delays() == [1.0, 4.0, 16.0, 60.0]


def test_environment_is_read_when_settings_are_silent(unset, monkeypatch) -> None:
    monkeypatch.setenv("STUDIO_VIDEO_POLL_SCALE", "0.5")
    monkeypatch.setenv("STUDIO_VIDEO_MIRROR_MAX_BYTES", "1000")
    monkeypatch.setenv("STUDIO_VIDEO_WEBHOOK_BACKOFF", "0")
    assert video_settings.poll_schedule() == [1.0, 1.5, 2.5, 4.0, 6.0]
    assert video_settings.mirror_max_bytes() == 1000
    assert video_settings.webhook_delays() == [0.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize(("raw", "enabled"), [("0", False), ("off", False), ("no", False), ("true", True),
                                              (" ON ", True), ("1", True)])
def test_callbacks_from_the_environment(unset, monkeypatch, raw: str, enabled: bool) -> None:
    monkeypatch.setenv("STUDIO_VIDEO_CALLBACKS", raw)
    assert video_settings.callbacks_enabled() is enabled


def test_settings_win_over_the_environment(unset, monkeypatch) -> None:
    monkeypatch.setenv("STUDIO_VIDEO_FIRST_POLL", "9")
    monkeypatch.setenv("STUDIO_VIDEO_CALLBACKS", "1")
    unset.STUDIO_VIDEO_FIRST_POLL = 0
    unset.STUDIO_VIDEO_CALLBACKS = False
    assert video_settings.first_poll_seconds() == 0.0  # a zero setting is a value, not "unset"
    assert video_settings.callbacks_enabled() is False
