"""Which headers carry the platform key on each route family (spec: "Authentication")."""

from __future__ import annotations

from django.http import HttpRequest

from studio.gateway import snapshot
from studio.gateway.errors import AuthenticationFailed, BadRequest
from studio.gateway.principal import Principal, authenticate


def _bearer(request: HttpRequest) -> str | None:
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def native_key(request: HttpRequest) -> str:
    """``x-delta-api-key`` (``x-goog-api-key`` as its alias, for the official SDK) or Bearer; one of them."""
    header_key = request.headers.get("x-delta-api-key") or request.headers.get("x-goog-api-key")
    bearer = _bearer(request)
    if header_key and bearer and header_key != bearer:
        raise BadRequest(
            "send the API key in one header: x-delta-api-key or Authorization: Bearer, not both",
            param="x-delta-api-key",
        )
    return header_key or bearer or ""


def bearer_key(request: HttpRequest) -> str:
    return _bearer(request) or ""


def messages_key(request: HttpRequest) -> str:
    """``X-Api-Key`` as the spec says; Bearer too, which current SDKs send."""
    return request.headers.get("x-api-key") or _bearer(request) or ""


async def principal_for(key: str) -> Principal:
    try:
        return authenticate(await snapshot.get(), key)
    except AuthenticationFailed:
        fresher = await snapshot.reload_after_miss() if key else None
        if fresher is None:
            raise
        return authenticate(fresher, key)
