"""Reading a request's headers without ``request.headers``.

Django's ``request.headers`` builds, on first use, a case-insensitive copy of every header in
``META`` (each name parsed and re-spelt); a /v1 call reads two or three named headers once each.
``header`` reads the one it needs from ``META`` itself, where it already is.
"""

from __future__ import annotations

from django.http import HttpRequest

from studio.api_request import meta_name
from studio.core.memo import Memo


def header(request: HttpRequest, name: str) -> str | None:
    """The header ``name`` as ``request.headers.get(name)`` reads it: any case, an underscore read
    as a hyphen, a repeated header joined by commas (a header sent with an underscore is never
    read: Django drops it)."""
    return request.META.get(_keys[name])


def _key(name: str) -> str:
    return meta_name(name.lower().replace("_", "-").encode("latin1")) or ""


_keys: Memo[str, str] = Memo(_key)  # a header's name → its META key
