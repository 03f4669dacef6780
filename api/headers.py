"""Reading a request's headers without ``request.headers``.

Django's ``request.headers`` builds, on first use, a case-insensitive copy of every header in
``META`` (each name parsed and re-spelt); a /v1 call reads two or three named headers once each.
``header`` reads the one it needs from ``META`` itself, where it already is.
"""

from __future__ import annotations

from django.http import HttpRequest

from studio.api_request import meta_name

_keys: dict[str, str] = {}  # a header's name → its META key; the names are the API's own constants


def header(request: HttpRequest, name: str) -> str | None:
    """The header ``name`` as ``request.headers.get(name)`` reads it: any case, an underscore read
    as a hyphen, a repeated header joined by commas (a header sent with an underscore is never
    read: Django drops it)."""
    key = _keys.get(name)
    if key is None:
        key = _keys[name] = meta_name(name.lower().replace("_", "-").encode("latin1")) or ""
    return request.META.get(key)
