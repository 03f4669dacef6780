"""What every upstream protocol adapter shares: transport error mapping and vendor error bodies."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import httpx
import orjson

from studio.gateway.errors import GatewayError, UpstreamTimeout, UpstreamUnavailable, from_upstream_status
from studio.gateway.snapshot import UpstreamEntry

from .http import get_client


class Provider:
    """A thin typed client of one vendor protocol, bound to one configured upstream."""

    protocol: ClassVar[str]

    def __init__(self, upstream: UpstreamEntry, client: httpx.AsyncClient | None = None) -> None:
        self.upstream = upstream
        self.client = client or get_client()

    # -- to override ---------------------------------------------------------------------------
    def auth_headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.upstream.credential}"}

    def error_from_response(self, status: int, body: bytes) -> GatewayError:
        """Turn a vendor's non-2xx answer into a typed error. Subclasses read their own body shape."""
        message = body[:500].decode("utf-8", "replace") or f"HTTP {status}"
        return from_upstream_status(status, message, details={"upstream_status": status})

    # -- helpers -------------------------------------------------------------------------------
    def url(self, path: str) -> str:
        return self.upstream.base_url + path

    def timeout(self) -> httpx.Timeout | None:
        if self.upstream.timeout:
            return httpx.Timeout(self.upstream.timeout, connect=min(self.upstream.timeout, 10.0))
        return None

    def _kwargs(self, headers: dict[str, str] | None) -> dict[str, Any]:
        kw: dict[str, Any] = {"headers": {**self.auth_headers(), **(headers or {})}}
        timeout = self.timeout()
        if timeout is not None:
            kw["timeout"] = timeout
        return kw

    async def request(
        self, method: str, path: str, *, content: bytes | None = None, json: Any = None,
        headers: dict[str, str] | None = None, params: dict[str, Any] | None = None,
    ) -> httpx.Response:
        """A buffered call; a non-2xx answer raises the typed error."""
        if json is not None:
            content = orjson.dumps(json)
            headers = {"content-type": "application/json", **(headers or {})}
        with map_transport_errors(self.upstream.name):
            send_direct = getattr(self.client, "send_direct", None)
            if send_direct is None:
                response = await self.client.request(
                    method, self.url(path), content=content, params=params, **self._kwargs(headers)
                )
            else:
                response = await send_direct(method, self.url(path), content=content, params=params,
                                             **self._kwargs(headers))
                try:
                    await response.aread()
                finally:
                    await response.aclose()
        if response.status_code >= 400:
            raise self.error_from_response(response.status_code, response.content)
        return response

    @contextlib.asynccontextmanager
    async def stream(
        self, method: str, path: str, *, content: bytes | None = None, headers: dict[str, str] | None = None,
    ) -> AsyncIterator[httpx.Response]:
        """A streamed call; a non-2xx answer is read in full and raised as the typed error."""
        send_direct = getattr(self.client, "send_direct", None)
        if send_direct is None:
            with map_transport_errors(self.upstream.name):
                async with self.client.stream(
                    method, self.url(path), content=content, **self._kwargs(headers)
                ) as response:
                    if response.status_code >= 400:
                        body = await response.aread()
                        raise self.error_from_response(response.status_code, body)
                    yield response
            return
        with map_transport_errors(self.upstream.name):
            response = await send_direct(method, self.url(path), content=content, **self._kwargs(headers))
        try:
            with map_transport_errors(self.upstream.name):
                if response.status_code >= 400:
                    body = await response.aread()
                    raise self.error_from_response(response.status_code, body)
                yield response
        finally:
            await response.aclose()


@contextlib.contextmanager
def map_transport_errors(upstream_name: str):
    try:
        yield
    except httpx.TimeoutException as exc:
        raise UpstreamTimeout(f"upstream '{upstream_name}' timed out") from exc
    except httpx.TransportError as exc:
        raise UpstreamUnavailable(f"upstream '{upstream_name}' is unreachable: {exc}") from exc


def json_body(body: bytes) -> dict[str, Any]:
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
