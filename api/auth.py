"""Which headers carry the platform key on each route family (spec: "Authentication")."""

from __future__ import annotations

from django.http import HttpRequest

from api.headers import header
from studio.core.errors import AuthenticationFailed, BadRequest
from studio.core.principal import Principal
from studio.gateway import snapshot
from studio.gateway.auth import authenticate


def _bearer(request: HttpRequest) -> str | None:
    value = header(request, "authorization")
    if value is None:
        return None
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def native_key(request: HttpRequest) -> str:
    """``x-delta-api-key`` (``x-goog-api-key`` as its alias, for the official SDK), Bearer, or ``?key=``.

    Several of them may be sent only when they carry the same key.
    """
    header_key = header(request, "x-delta-api-key") or header(request, "x-goog-api-key")
    given = [key for key in (header_key, _bearer(request), request.GET.get("key")) if key]
    if len(set(given)) > 1:
        raise BadRequest(
            "send the API key in one header (x-delta-api-key or Authorization: Bearer) or as ?key=, "
            "not different keys in several",
            param="x-delta-api-key",
        )
    return given[0] if given else ""


def bearer_key(request: HttpRequest) -> str:
    return _bearer(request) or ""


def messages_key(request: HttpRequest) -> str:
    """``X-Api-Key`` as the spec says; Bearer too, which current SDKs send."""
    return header(request, "x-api-key") or _bearer(request) or ""


async def principal_for(key: str) -> Principal:
    try:
        return authenticate(await snapshot.get(), key)
    except AuthenticationFailed:
        fresher = await snapshot.reload_after_miss(key) if key else None
        if fresher is None:
            raise
    try:
        return authenticate(fresher, key)
    except AuthenticationFailed:
        snapshot.missed(fresher, key)
        raise
