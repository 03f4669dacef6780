"""How long an upstream call may take, per route family: connect, first byte, and in all.

``STUDIO_UPSTREAM_DEADLINES`` holds the seconds for each family (``text``, ``images``, ``video``);
the registry hands each provider the deadlines of the capability it is built for. A body read
past the overall deadline stops at the next chunk: the read is bounded, never the caller's
code between chunks (a stream's consumer may be sending to its own client meanwhile).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import httpx

from studio.core.errors import UpstreamTimeout
from studio.core.hot_settings import hot
from studio.providers.bodies import WholeBodyStream
from studio.providers.contracts import Capability

FAMILY_OF = {Capability.TEXT: "text", Capability.IMAGES: "images", Capability.NATIVE_IMAGE: "images",
             Capability.VIDEO_TASKS: "video", Capability.TOKEN_COUNT: "text", Capability.EMBEDDINGS: "text",
             Capability.EMBEDDING_TOKENS: "text"}


@dataclass(frozen=True, slots=True)
class Deadlines:
    connect: float
    first_byte: float
    total: float


_made: dict[Capability, tuple[object, Deadlines]] = {}


def deadlines_for(capability: Capability) -> Deadlines:
    """The family's deadlines, made once per setting (every upstream call asks for them)."""
    table = hot.STUDIO_UPSTREAM_DEADLINES
    made = _made.get(capability)
    if made is None or made[0] is not table:
        made = _made[capability] = (table, Deadlines(**table[FAMILY_OF[capability]]))
    return made[1]


class Bound:
    """``asyncio.timeout_at(due)`` over a block of one task, as a plain context manager whose
    deadline may be moved later for free: ``due`` is read again when the timer fires, which then
    waits on to the new one (a first-byte deadline followed by the overall one costs one timer,
    not a cancel and a new one on every call). ``due`` None: no deadline. The block's
    cancellation by the timer is a ``TimeoutError`` (unless someone else cancelled the task too)."""

    __slots__ = ("_cancelling", "_fired", "_handle", "_loop", "_task", "due")

    def __init__(self, due: float | None) -> None:
        self.due = due
        self._handle: asyncio.TimerHandle | None = None
        self._fired = False

    def __enter__(self) -> Bound:
        task = asyncio.current_task()
        assert task is not None, "a deadline bounds a task's awaits"
        self._task, self._cancelling = task, task.cancelling()
        if self.due is not None:
            self._loop = task.get_loop()
            self._handle = self._loop.call_at(self.due, self._expire)
        return self

    def _expire(self) -> None:
        due = self.due
        if due is not None and due > self._loop.time():  # moved on meanwhile: wait for it
            self._handle = self._loop.call_at(due, self._expire)
            return
        self._handle = None
        self._fired = True
        self._task.cancel()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: object) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self._fired:
            self._fired = False
            if self._task.uncancel() <= self._cancelling and kind is asyncio.CancelledError:
                raise TimeoutError from value


class DeadlineStream(WholeBodyStream):
    """An answer's body whose every read ends by ``deadline`` (the event loop's clock)."""

    def __init__(self, inner: httpx.AsyncByteStream, deadline: float, expired: Callable[[], UpstreamTimeout]) -> None:
        self.inner = inner
        self.deadline = deadline
        self.expired = expired
        self.reads: _Bounded | None = None

    def __aiter__(self) -> AsyncIterator[bytes]:
        self.reads = _Bounded(aiter(self.inner), self.deadline, self.expired)
        return self.reads

    async def read_pieces(self) -> list[bytes]:
        """The whole body by the deadline: in one read where the inner stream can."""
        if asyncio.get_running_loop().time() >= self.deadline:
            raise self.expired()
        try:
            with Bound(self.deadline):
                if isinstance(self.inner, WholeBodyStream):
                    return await self.inner.read_pieces()
                return [chunk async for chunk in self.inner]
        except TimeoutError:
            raise self.expired() from None

    async def aclose(self) -> None:
        if self.reads is not None:
            self.reads.stop()
        await self.inner.aclose()


class _Bounded:
    """The reads of a ``DeadlineStream``, under one timer for the whole stream (not one per read):
    when the deadline passes during a read, the read is cancelled and ends in the timeout; when
    it passes between reads (the reader's own code running), the next read ends in it. The timer
    is stopped at the stream's end, at a failed read and when the stream is closed; it holds the
    reads weakly, so reads left behind unclosed are still let go. A plain iterator, not an async
    generator: one a reader leaves unfinished would be closed, once collected, by a task scheduled
    through the event loop's wake-up pipe."""

    __slots__ = ("__weakref__", "cancelled", "chunks", "deadline", "expired", "loop", "reader", "timer")

    def __init__(self, chunks: AsyncIterator[bytes], deadline: float, expired: Callable[[], UpstreamTimeout]) -> None:
        self.chunks, self.deadline, self.expired = chunks, deadline, expired
        self.loop = asyncio.get_running_loop()
        self.timer: asyncio.TimerHandle | None = None
        self.reader: asyncio.Task | None = None  # the task inside a read, while it is
        self.cancelled = False  # the timer cancelled the reader

    def __aiter__(self) -> _Bounded:
        return self

    async def __anext__(self) -> bytes:
        if self.loop.time() >= self.deadline:
            self.stop()
            raise self.expired()
        if self.timer is None:
            self.timer = self.loop.call_at(self.deadline, _expire, weakref.ref(self))
        # Its own loop named: without one, ``current_task`` looks the running loop up (and, on this
        # Python, asks the system for the process id) at each read.
        task = asyncio.current_task(self.loop)
        assert task is not None, "a stream is read in a task"
        cancelling = task.cancelling()
        self.reader = task
        try:
            chunk = await self.chunks.__anext__()
        except BaseException as exc:  # the end, a failure, or a cancellation (the timer's or another's)
            self.reader = None
            self.stop()
            if self._undo(task, cancelling) and isinstance(exc, asyncio.CancelledError):
                raise self.expired() from None
            raise
        self.reader = None
        self._undo(task, cancelling)  # the chunk came as the deadline passed: the read was in time
        return chunk

    def _undo(self, task: asyncio.Task, cancelling: int) -> bool:
        """Take back the timer's cancellation of ``task``, if it made one: whether that was the
        only one made during the read (so the read ended by the deadline, not by someone else)."""
        if not self.cancelled:
            return False
        self.cancelled = False
        return task.uncancel() <= cancelling

    def stop(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


def _expire(reads: weakref.ref[_Bounded]) -> None:
    """The deadline of a stream: a read under way is cancelled; otherwise the next one ends."""
    found = reads()
    if found is None:
        return
    found.timer = None
    if found.reader is not None:
        found.cancelled = True
        found.reader.cancel()
