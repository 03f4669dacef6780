"""Video engine knobs, read from Django settings (``STUDIO_VIDEO_*``, see studio/settings.py)."""

from __future__ import annotations

from django.conf import settings


def first_poll_seconds() -> float:
    return float(settings.STUDIO_VIDEO_FIRST_POLL)


def poll_schedule() -> list[float]:
    """Seconds to the next poll after 1, 2, 3… polls: fast at first, then the 10-15 s guidance."""
    scale = float(settings.STUDIO_VIDEO_POLL_SCALE)
    return [s * scale for s in (2.0, 3.0, 5.0, 8.0, 12.0)]


def max_task_age() -> float:
    """Seconds after creation past which a task is expired whatever it asked for, so that no
    task is polled forever (Ark's longest ``execution_expires_after`` by default)."""
    return float(settings.STUDIO_VIDEO_MAX_TASK_AGE)


def not_found_grace() -> float:
    """Seconds after creation during which an upstream's "task not found" is taken as not yet visible."""
    return float(settings.STUDIO_VIDEO_NOT_FOUND_GRACE)


def unreadable_polls() -> int:
    """Polls in a row whose answer cannot be read after which the task fails (at least 1)."""
    return max(int(settings.STUDIO_VIDEO_UNREADABLE_POLLS), 1)


def lease_seconds() -> float:
    return float(settings.STUDIO_VIDEO_LEASE_SECONDS)


def callbacks_enabled() -> bool:
    return bool(settings.STUDIO_VIDEO_CALLBACKS)


def mirror_max_bytes() -> int:
    return int(float(settings.STUDIO_VIDEO_MIRROR_MAX_BYTES))


def mirror_timeout() -> float:
    return float(settings.STUDIO_VIDEO_MIRROR_TIMEOUT)


def webhook_delays() -> list[float]:
    """Pauses before each retry of a client webhook."""
    scale = float(settings.STUDIO_VIDEO_WEBHOOK_BACKOFF)
    return [s * scale for s in (1.0, 4.0, 16.0, 60.0)]
