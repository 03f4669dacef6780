"""A setting read through ``hot`` is Django's, before and after it is changed."""

from __future__ import annotations

import pytest
from django.conf import settings as django_settings
from django.test import override_settings

from studio.core.hot_settings import NAMES, hot, script_prefix


@pytest.mark.parametrize("name", sorted(NAMES))
def test_a_kept_setting_reads_as_django_reads_it(name):
    assert getattr(hot, name) == getattr(django_settings, name)
    assert getattr(hot, name) == getattr(django_settings, name)  # kept by now


def test_a_changed_setting_is_read_again(settings):
    def kept() -> int:
        return hot.DATA_UPLOAD_MAX_MEMORY_SIZE

    changed = kept() + 7
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = changed  # pytest-django's fixture: override_settings
    assert kept() == changed
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=3):
        assert kept() == 3
    assert kept() == changed


def test_a_setting_not_kept_is_refused():
    with pytest.raises(AttributeError, match="not one of the settings kept here"):
        hot.SECRET_KEY  # noqa: B018


@pytest.mark.parametrize(("forced", "scope", "prefix"), [
    (None, {"root_path": "/gw"}, "/gw"), (None, {}, ""), (None, {"root_path": None}, ""),
    ("/forced", {"root_path": "/gw"}, "/forced"), ("", {"root_path": "/gw"}, "/gw"),
])
def test_the_script_prefix_is_the_one_django_gives(settings, forced, scope, prefix):
    from django.core.handlers.asgi import get_script_prefix

    settings.FORCE_SCRIPT_NAME = forced
    assert script_prefix(scope) == get_script_prefix(scope) == prefix
