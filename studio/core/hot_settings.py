"""The settings a /v1 call reads, as plain attributes: ``hot.NAME``.

``django.conf.settings`` is a lazy object. Each read of it runs its ``__getattribute__`` in Python
and, for a value that is not a function, a ``getattr`` with a default that raises and catches an
``AttributeError`` inside: about half a microsecond a read, and a /v1 call made about ten. Here a
setting is read from Django once, then kept as an attribute of ``hot``; a ``setting_changed``
signal (``override_settings``, ``TestCase.settings``) drops the kept value, so the next read sees
the new one. Only the names in ``NAMES`` are kept; settings do not change in a running server.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.signals import setting_changed

NAMES = frozenset({
    "DATA_UPLOAD_MAX_MEMORY_SIZE", "FILE_UPLOAD_MAX_MEMORY_SIZE", "FORCE_SCRIPT_NAME", "REDIS_URL", "STUDIO_CACHE_TTL",
    "STUDIO_LOG_PROMPTS", "STUDIO_METRICS", "STUDIO_RECORDER_MAX_PENDING_BYTES", "STUDIO_REQUEST_LOG",
    "STUDIO_SNAPSHOT_MAX_AGE", "STUDIO_UPSTREAM_DEADLINES", "STUDIO_UPSTREAM_SUCCESS_NOTE_SECONDS",
})


class HotSettings:
    """Reads a setting of ``NAMES`` from Django the first time, then as a plain attribute."""

    def __getattr__(self, name: str) -> Any:  # only for a name not kept yet
        if name not in NAMES:
            raise AttributeError(f"{name} is not one of the settings kept here (studio.core.hot_settings.NAMES)")
        value = getattr(settings, name)
        self.__dict__[name] = value
        return value


hot = HotSettings()


def _changed(*, setting: str, **kwargs: Any) -> None:
    hot.__dict__.pop(setting, None)


setting_changed.connect(_changed, dispatch_uid="studio.core.hot_settings")


def script_prefix(scope: dict[str, Any]) -> str:
    """Django's ``get_script_prefix(scope)``, reading ``FORCE_SCRIPT_NAME`` from here."""
    return hot.FORCE_SCRIPT_NAME or scope.get("root_path", "") or ""
