"""Video engine knobs: Django settings when defined, else the environment, else defaults."""

from __future__ import annotations

import os

from django.conf import settings


def _number(name: str, default: float) -> float:
    value = getattr(settings, name, None)
    if value is None:
        value = os.environ.get(name) or default
    return float(value)


def first_poll_seconds() -> float:
    return _number("STUDIO_VIDEO_FIRST_POLL", 2.0)


def poll_schedule() -> list[float]:
    """Seconds to the next poll after 1, 2, 3… polls: fast at first, then the 10-15 s guidance."""
    scale = _number("STUDIO_VIDEO_POLL_SCALE", 1.0)
    return [s * scale for s in (2.0, 3.0, 5.0, 8.0, 12.0)]


def max_task_age() -> float:
    """Seconds after creation past which a task is expired whatever it asked for, so that no
    task is polled forever (Ark's longest ``execution_expires_after`` by default)."""
    return _number("STUDIO_VIDEO_MAX_TASK_AGE", 259200.0)


def not_found_grace() -> float:
    """Seconds after creation during which an upstream's "task not found" is taken as not yet visible."""
    return _number("STUDIO_VIDEO_NOT_FOUND_GRACE", 120.0)


def lease_seconds() -> float:
    return _number("STUDIO_VIDEO_LEASE_SECONDS", 60.0)


def callbacks_enabled() -> bool:
    value = getattr(settings, "STUDIO_VIDEO_CALLBACKS", None)
    if value is None:
        return os.environ.get("STUDIO_VIDEO_CALLBACKS", "1").strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def mirror_max_bytes() -> int:
    return int(_number("STUDIO_VIDEO_MIRROR_MAX_BYTES", 512 * 1024 * 1024))


def mirror_timeout() -> float:
    return _number("STUDIO_VIDEO_MIRROR_TIMEOUT", 120.0)


def webhook_delays() -> list[float]:
    """Pauses before each retry of a client webhook."""
    scale = _number("STUDIO_VIDEO_WEBHOOK_BACKOFF", 1.0)
    return [s * scale for s in (1.0, 4.0, 16.0, 60.0)]
