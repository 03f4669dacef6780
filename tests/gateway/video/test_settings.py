"""Video engine knobs: read from Django settings (``STUDIO_VIDEO_*``, read from the environment once:
their defaults and parsing are tested in tests/test_settings.py), with the schedules they scale."""

from __future__ import annotations

from studio.gateway.video import settings as video_settings


def test_scales_multiply_the_schedules(settings) -> None:
    settings.STUDIO_VIDEO_POLL_SCALE = 0.5
    settings.STUDIO_VIDEO_MIRROR_MAX_BYTES = 1000
    settings.STUDIO_VIDEO_WEBHOOK_BACKOFF = 0
    assert video_settings.poll_schedule() == [1.0, 1.5, 2.5, 4.0, 6.0]
    assert video_settings.mirror_max_bytes() == 1000
    assert video_settings.webhook_delays() == [0.0, 0.0, 0.0, 0.0]


def test_zero_and_false_are_values(settings) -> None:
    settings.STUDIO_VIDEO_FIRST_POLL = 0
    settings.STUDIO_VIDEO_CALLBACKS = False
    assert video_settings.first_poll_seconds() == 0.0
    assert video_settings.callbacks_enabled() is False
