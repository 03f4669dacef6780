"""One lean Redis connection: a packed command goes out, its reply comes back through hiredis.

For the counters' script runs, which go one at a time and sit on every /v1 call's path: redis-py's
connection (stream reader, a timeout context per read, health checks), built for every case, costs
about three times the CPU of the round trip itself. This speaks the same protocol with nothing in
between; a lost connection or a reply that takes longer than ``timeout`` fails the call and the
next one connects afresh. ``redis://``, ``rediss://`` and ``unix://`` URLs, with user, password
and database.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from typing import Any, cast

import hiredis
from redis.asyncio.connection import SSLConnection, UnixDomainSocketConnection, parse_url
from redis.exceptions import NoScriptError, ResponseError


def pack(*args: str | bytes | int) -> bytes:
    """A command in Redis's wire format."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        raw = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%b\r\n" % (len(raw), raw))
    return b"".join(out)


class _Protocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.reader = hiredis.Reader()
        self.waiting: deque[asyncio.Future] = deque()
        self.transport: asyncio.Transport | None = None
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are not subclasses

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        while (reply := self.reader.gets()) is not False:
            if self.waiting:
                future = self.waiting.popleft()
                if not future.done():
                    future.set_result(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        while self.waiting:
            future = self.waiting.popleft()
            if not future.done():
                future.set_exception(ConnectionError(f"Redis connection lost: {exc!r}"))


def _expire(future: asyncio.Future) -> None:
    if not future.done():
        future.set_exception(TimeoutError("no reply from Redis in time"))


class Link:
    NoScript = NoScriptError  # what ``call`` raises when Redis does not know a script
    pack = staticmethod(pack)

    def __init__(self, url: str, timeout: float) -> None:
        self.options = parse_url(url)
        self.timeout = timeout
        self._protocol: _Protocol | None = None

    async def _connect(self) -> _Protocol:
        loop = asyncio.get_running_loop()
        o = self.options
        kind = o.get("connection_class")
        if kind is UnixDomainSocketConnection:
            connecting = loop.create_unix_connection(_Protocol, o["path"])
        else:
            tls = ssl.create_default_context() if kind is SSLConnection else None
            connecting = loop.create_connection(_Protocol, o.get("host", "localhost"), o.get("port", 6379), ssl=tls)
        _, protocol = await asyncio.wait_for(connecting, self.timeout)
        self._protocol = protocol
        try:
            if o.get("password"):
                user = [o["username"]] if o.get("username") else []
                await self.call(pack("AUTH", *user, o["password"]))
            if o.get("db"):
                await self.call(pack("SELECT", o["db"]))
        except BaseException:
            self.close()
            raise
        return protocol

    async def call(self, command: bytes) -> Any:
        """Send ``command`` (packed) and return its reply; a Redis error is raised as redis-py's."""
        protocol = self._protocol
        if protocol is None or protocol.lost:
            protocol = await self._connect()
        assert protocol.transport is not None
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        protocol.waiting.append(future)
        protocol.transport.write(command)
        timer = loop.call_later(self.timeout, _expire, future)
        try:
            reply = await future
        except BaseException:  # timed out, lost or cancelled: a reply may still come, so start clean
            self.close()
            raise
        finally:
            timer.cancel()
        if isinstance(reply, hiredis.ReplyError):
            message = str(reply)
            raise NoScriptError(message) if message.startswith("NOSCRIPT") else ResponseError(message)
        return reply

    def close(self) -> None:
        protocol, self._protocol = self._protocol, None
        if protocol is not None and protocol.transport is not None:
            protocol.transport.close()
