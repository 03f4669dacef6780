"""Gateway events every process hears: a Redis pub/sub channel when ``REDIS_URL`` is set.

Messages are small JSON objects with a ``kind``; modules register a handler per kind
(``on(kind, handler)``). With Redis, ``publish`` reaches every process (this one included) and
each process runs one ``listen`` task; without Redis there is one process to tell, and
``publish`` calls the handlers in place. A listener that loses its connection reconnects and
reports ``resync`` to its handlers, since messages may have been missed meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson
from django.conf import settings

if TYPE_CHECKING:
    from redis.asyncio import Redis

logger = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], None]
RESYNC = "resync"
_handlers: dict[str, list[Handler]] = {}
_listeners: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task] = weakref.WeakKeyDictionary()
_sync_client: list[Any] = []  # one connection pool per process, made on first use
# One client (with its connection pool) per event loop, kept as long as the loop, for short commands.
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Redis] = weakref.WeakKeyDictionary()


def channel() -> str:
    return f"{settings.STUDIO_REDIS_PREFIX}:gateway-events"


def shared() -> bool:
    return bool(settings.REDIS_URL)


def on(kind: str, handler: Handler) -> None:
    if handler not in _handlers.setdefault(kind, []):
        _handlers[kind].append(handler)


def dispatch(message: dict[str, Any]) -> None:
    for handler in _handlers.get(str(message.get("kind")), ()):
        try:
            handler(message)
        except Exception:
            logger.exception("handling gateway event %s failed", message.get("kind"))


def publish_sync(message: dict[str, Any]) -> None:
    """Tell every process (from sync code: signal receivers, management commands)."""
    if not shared():
        dispatch(message)
        return
    import redis

    if not _sync_client:
        _sync_client.append(redis.Redis.from_url(settings.REDIS_URL, **settings.REDIS_CONNECTION_OPTIONS))
    try:
        _sync_client[0].publish(channel(), orjson.dumps(message))
    except redis.RedisError:  # the TTL refresh still brings every process up to date
        logger.warning("publishing gateway event %s failed", message.get("kind"), exc_info=True)


def async_client() -> Redis:
    """A new client, with a pool of its own: the caller closes it (``aclose``)."""
    import redis.asyncio

    return redis.asyncio.Redis.from_url(settings.REDIS_URL, **settings.REDIS_CONNECTION_OPTIONS)


def loop_client() -> Redis:
    """This event loop's client for short commands, whose connections stay open between uses
    (not closed by its callers)."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        client = _clients[loop] = async_client()
    return client


async def publish(message: dict[str, Any]) -> None:
    if not shared():
        dispatch(message)
        return
    await loop_client().publish(channel(), orjson.dumps(message))


def start() -> asyncio.Task | None:
    """Start this event loop's listener (once per loop); None without Redis."""
    if not shared():
        return None
    loop = asyncio.get_running_loop()
    task = _listeners.get(loop)
    if task is None or task.done():
        task = loop.create_task(listen(), name="gateway-events")
        _listeners[loop] = task
    return task


async def stop() -> None:
    """Stop this event loop's listener and close its kept client (``loop_client``)."""
    loop = asyncio.get_running_loop()
    task = _listeners.pop(loop, None)
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    client = _clients.pop(loop, None)
    if client is not None:
        await client.aclose()


async def listen(ready: asyncio.Event | None = None) -> None:
    import redis.asyncio

    delay = 0.5
    while True:
        # A subscriber waits indefinitely for messages: no read timeout; keepalive and periodic
        # pings (health_check_interval) find a dead connection.
        options = {**settings.REDIS_CONNECTION_OPTIONS, "socket_timeout": None}
        client = redis.asyncio.Redis.from_url(settings.REDIS_URL, **options)
        try:
            async with client.pubsub(ignore_subscribe_messages=True) as pubsub:
                await pubsub.subscribe(channel())
                dispatch({"kind": RESYNC})  # whatever was missed before (re)subscribing
                if ready is not None:
                    ready.set()
                delay = 0.5
                while True:
                    message = await pubsub.get_message(timeout=30.0)
                    if message is None or message.get("type") != "message":
                        continue
                    try:
                        dispatch(orjson.loads(message["data"]))
                    except orjson.JSONDecodeError:
                        logger.warning("ignoring a malformed gateway event")
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.warning("gateway events: connection lost; reconnecting", exc_info=True)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 10.0)
        finally:
            with contextlib.suppress(Exception):
                await client.aclose()
