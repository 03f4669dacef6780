"""Closing a stream that is left before its end."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any


async def close(stream: AsyncIterator[Any]) -> None:
    """Close ``stream`` now if it is an async generator, so its ``finally`` (a cut stream's charge,
    its upstream's release) runs at once. Leaving an ``async for`` over it does not close it: that
    waits for the garbage collector. Closing one that has ended does nothing; other iterators have
    nothing to close."""
    if isinstance(stream, AsyncGenerator):
        await stream.aclose()
