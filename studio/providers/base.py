"""What every upstream protocol adapter shares: its base-URL rule, transport and vendor error mapping.

A provider class is the one description of a vendor protocol: ``protocol`` (its registry name),
``capabilities`` (the contracts of ``studio.providers.contracts`` it implements), ``base_url``
(how an operator's base URL becomes request URLs) and ``error_mapping`` (a vendor's non-2xx body
as a typed error). Calls go through the process's ``UpstreamClient`` (``providers/http.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx
import orjson

from studio.core import request_id
from studio.core.entries import UpstreamEntry
from studio.core.errors import GatewayError, UpstreamTimeout, UpstreamUnavailable, from_upstream_status
from studio.providers.bodies import close_answer, read_answer
from studio.providers.contracts import Capability
from studio.providers.deadlines import Bound, Deadlines, DeadlineStream
from studio.providers.http import UpstreamClient, get_client

# A vendor's non-2xx answer (status, body, upstream name) as the typed error.
ErrorMapping = Callable[[int, bytes, str], GatewayError]


def plain_error(status: int, body: bytes, upstream_name: str) -> GatewayError:
    """The mapping for a body in no known shape: its first bytes are the message."""
    message = body[:500].decode("utf-8", "replace") or f"HTTP {status}"
    return from_upstream_status(status, message, details={"upstream_status": status})


@dataclass(frozen=True, slots=True)
class BaseUrlRule:
    """Operators configure a vendor's base URL with or without its API version; both work.

    ``version`` is added when the base URL does not already end in a version ``accepts`` matches.
    """

    version: str
    accepts: re.Pattern[str]

    def url(self, base_url: str, path: str) -> str:
        return _joined(self, base_url, path)


@functools.lru_cache(maxsize=4096)
def _joined(rule: BaseUrlRule, base_url: str, path: str) -> str:
    """``rule.url``: an upstream's calls repeat a handful of paths, each joined once."""
    base = base_url.rstrip("/")
    return base + ("" if rule.accepts.search(base) else rule.version) + path


class Provider:
    """A thin typed client of one vendor protocol, bound to one configured upstream."""

    protocol: ClassVar[str]
    capabilities: ClassVar[frozenset[Capability]] = frozenset()
    base_url: ClassVar[BaseUrlRule]
    error_mapping: ClassVar[ErrorMapping] = staticmethod(plain_error)
    upstream: UpstreamEntry
    client: UpstreamClient
    deadlines: Deadlines | None

    def __init__(self, upstream: UpstreamEntry, client: UpstreamClient | None = None,
                 deadlines: Deadlines | None = None) -> None:
        self.upstream = upstream
        self.client = client or get_client()
        self.deadlines = deadlines

    # -- to override ---------------------------------------------------------------------------
    def auth_headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.upstream.credential}"}

    def check_path(self) -> str:
        """A cheap authenticated read (a model or task list): ``manage.py upstream test`` calls it."""
        raise NotImplementedError(f"{type(self).__name__} has no check call")

    async def check(self) -> int:
        """Call ``check_path``; the HTTP status of a 2xx answer (other answers raise typed errors)."""
        response = await self.request("GET", self.check_path())
        return response.status_code

    # -- helpers -------------------------------------------------------------------------------
    def error_from_response(self, status: int, body: bytes) -> GatewayError:
        """A vendor's non-2xx answer as a typed error, read by the vendor's ``error_mapping``."""
        return self.error_mapping(status, body, self.upstream.name)

    def error_from_answer(self, response: httpx.Response, body: bytes) -> GatewayError:
        """``error_from_response``, with the answer's ``Retry-After`` (in seconds) kept on a 429 or 503
        whose body did not say when to come back, so the client's error carries it."""
        exc = self.error_from_response(response.status_code, body)
        if exc.retry_after is None and response.status_code in (429, 503):
            exc.retry_after = retry_after_seconds(response.headers.get("retry-after"))
        return exc

    def url(self, path: str) -> str:
        """``path`` is relative to the vendor's API version (``/images/generations``)."""
        return self.base_url.url(self.upstream.base_url, path)

    def timeout(self) -> httpx.Timeout | None:
        """The upstream's own read timeout (between two bytes), and the family's connect timeout."""
        connect = self.deadlines.connect if self.deadlines is not None else None
        if self.upstream.timeout:
            read = self.upstream.timeout
            return _timeout(read, min(read, connect or 10.0), read)
        if connect is not None:
            return _timeout(self.client.timeout.read, connect, connect)
        return None

    async def _send(self, method: str, path: str, content: bytes | None, params: dict[str, Any] | None,
                    headers: dict[str, str] | None) -> httpx.Response:
        """Send; the answer's status line must come within the first-byte deadline, its body
        within the overall one (each a ``UpstreamTimeout``)."""
        kwargs = self._kwargs(headers)
        if self.deadlines is None:
            return await self.client.send_direct(method, self.url(path), content=content, params=params, **kwargs)
        deadlines = self.deadlines
        start = asyncio.get_running_loop().time()
        first_byte = min(deadlines.first_byte, deadlines.total)
        try:
            with Bound(start + first_byte):
                response = await self.client.send_direct(method, self.url(path), content=content, params=params,
                                                         **kwargs)
        except TimeoutError:
            raise self._timed_out("first_byte", first_byte) from None
        response.stream = DeadlineStream(response.stream, start + deadlines.total,
                                         lambda: self._timed_out("total", deadlines.total))
        return response

    async def _fetch(self, method: str, path: str, content: bytes | None, params: dict[str, Any] | None,
                     headers: dict[str, str] | None) -> httpx.Response:
        """``_send`` and the whole body read, under one timer: it is set to the first-byte
        deadline while the status line is awaited, then moved to the overall one for the body
        (what ``_send`` and its ``DeadlineStream`` do with two). Without deadlines, no timer."""
        deadlines = self.deadlines
        start = asyncio.get_running_loop().time()
        first_byte = min(deadlines.first_byte, deadlines.total) if deadlines is not None else None
        kwargs = self._kwargs(headers)
        sent = None
        try:
            with Bound(start + first_byte if first_byte is not None else None) as bound:
                sent = await self.client.send_direct(method, self.url(path), content=content, params=params,
                                                     **kwargs)
                if deadlines is not None:
                    bound.due = start + deadlines.total
                try:
                    return await read_answer(sent)
                finally:
                    await close_answer(sent)
        except TimeoutError:
            if deadlines is None:
                raise  # no deadline of this call's
            if sent is None:
                raise self._timed_out("first_byte", first_byte) from None
            raise self._timed_out("total", deadlines.total) from None

    def _timed_out(self, which: str, seconds: float) -> UpstreamTimeout:
        what = "sent no answer" if which == "first_byte" else "did not finish its answer"
        return UpstreamTimeout(f"upstream '{self.upstream.name}' {what} within {seconds:g} s",
                               details={"timeout": which, "seconds": seconds})

    def _kwargs(self, headers: dict[str, str] | None) -> dict[str, Any]:
        sent = {**self.auth_headers(), **(headers or {})}
        rid = request_id.current.get()
        if rid is not None:
            sent[request_id.HEADER] = rid
        kw: dict[str, Any] = {"headers": sent}
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
            response = await self._fetch(method, path, content, params, headers)
        if response.status_code >= 400:
            raise self.error_from_answer(response, response.content)
        return response

    @contextlib.asynccontextmanager
    async def stream(
        self, method: str, path: str, *, content: bytes | None = None, headers: dict[str, str] | None = None,
    ) -> AsyncIterator[httpx.Response]:
        """A streamed call; a non-2xx answer is read in full and raised as the typed error."""
        with map_transport_errors(self.upstream.name):
            response = await self._send(method, path, content, None, headers)
        try:
            with map_transport_errors(self.upstream.name):
                if response.status_code >= 400:
                    body = await response.aread()
                    raise self.error_from_answer(response, body)
                yield response
        finally:
            await close_answer(response)


@functools.lru_cache(maxsize=256)
def _timeout(read: float | None, connect: float | None, pool: float | None) -> httpx.Timeout:
    """An upstream's timeouts (one object per distinct value, not one per call)."""
    return httpx.Timeout(read, connect=connect, pool=pool)


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` header's delay in seconds (the HTTP-date form is not used by vendors)."""
    try:
        seconds = float(value) if value else None
    except ValueError:
        return None
    return seconds if seconds is not None and 0 < seconds < 86400 else None


class map_transport_errors:  # noqa: N801 - used as a ``with`` statement's function
    """``with map_transport_errors(name):`` a transport's error as the typed error the client gets.

    A class rather than a ``contextlib.contextmanager``: every vendor call enters it, and a
    generator's set-up and tear-down cost several times what these two methods do."""

    __slots__ = ("upstream_name",)

    def __init__(self, upstream_name: str) -> None:
        self.upstream_name = upstream_name

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if exc is None:
            return
        name = self.upstream_name
        if isinstance(exc, httpx.TimeoutException):
            if _refused(exc):  # the aiohttp transport reports a refused connection as a connect timeout
                raise UpstreamUnavailable(f"upstream '{name}' refused the connection") from exc
            raise UpstreamTimeout(f"upstream '{name}' timed out") from exc
        if isinstance(exc, httpx.TransportError):
            raise UpstreamUnavailable(f"upstream '{name}' is unreachable: {exc}") from exc


def _refused(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, ConnectionRefusedError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def json_body(body: bytes) -> dict[str, Any]:
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
