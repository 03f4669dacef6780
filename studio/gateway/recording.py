"""Writing records off the response path.

A /v1 request hands its record to ``submit()`` and returns; a background task per event loop
collects records and persists them in batches in a worker thread. ``drain()`` waits until
everything submitted so far is written (tests, shutdown).

A record that cannot be written is never dropped quietly: the failure is logged with the
record's kind and counted (``failures``), and the record is tried again after a growing delay
(``STUDIO_RECORDER_RETRY_DELAYS``); only after the last try is it given up, logged as lost.
"""

from __future__ import annotations

import abc
import asyncio
import logging
import time
import weakref
from typing import ClassVar, Self

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections, transaction

from studio.core.hot_settings import hot
from studio.gateway import recorder_metrics

logger = logging.getLogger(__name__)

# The recorder takes what is queued, up to BATCH records, the moment it wakes: its write then goes
# to the thread-sensitive executor ahead of whatever the caller does next there (a studio job
# announcing "completed" after its record is handed over finds the row written). Under load the
# queue fills while a batch is on the thread, so batches grow by themselves. Only when every record
# waiting is *patient* (a /v1 call's usage, which nothing reads back at once) does it linger up to
# ``STUDIO_RECORDER_LINGER_MS`` for company: a batch of a few rows costs about what one row costs
# (the thread hop, the transaction and its commit, the key's last use), so a busy gateway writes
# each row for a fraction of that. An impatient record, a full batch or ``drain()`` ends the wait.
# A row of a batch of 256 costs about three quarters of one of a batch of 64 (SQLite, usage rows), and
# the default linger (100 ms) fills such a batch at about 2,600 calls a second.
BATCH = 256


class Stats:
    """Counters of this process's recorder (``recorder_metrics`` exports them to Prometheus)."""

    failures = 0  # attempts to persist a record that raised
    retried = 0  # records queued again after a failure
    lost = 0  # records given up after the last retry


class Record(abc.ABC):
    """What the recorder writes. ``persist()`` writes one record; a kind whose records can be
    written many at a time (bulk inserts) overrides ``persist_batch``, which otherwise writes them
    one after another. A record holding big media until written says how much (``pending_bytes``),
    so the recorder can hold back the requests that make more."""

    __slots__ = ()

    @abc.abstractmethod
    def persist(self) -> None:
        """Write this record (runs in the recorder's worker thread)."""

    @classmethod
    def persist_batch(cls, records: list[Self]) -> None:
        """Write ``records``, all of this kind, inside the caller's transaction."""
        for record in records:
            record.persist()

    def pending_bytes(self) -> int:
        """Bytes this record holds until it is written."""
        return 0


class TimedRecord(Record):
    """Timing and hand-off shared by the per-call records.

    Mixed into dataclasses that define ``started`` (perf_counter at the start), ``first_byte_ms``,
    ``duration_ms``, ``error`` and ``submitted``; it adds no fields of its own.
    """

    __slots__ = ()
    # True: nothing reads the row back at once, so its write may wait a moment for company.
    patient: ClassVar[bool] = False

    def first_chunk(self) -> None:
        if self.first_byte_ms is None:
            self.first_byte_ms = int((time.perf_counter() - self.started) * 1000)

    def charge(self) -> None:
        """Settle the call's cost before the record is handed over (records that cost override it)."""

    def fail(self, error) -> None:
        self.error = error
        self.finish()

    def finish(self) -> None:
        """Hand the record to the recorder, once; the response does not wait for the write."""
        if self.submitted:
            return
        self.submitted = True
        self.charge()
        self.duration_ms = int((time.perf_counter() - self.started) * 1000)
        submit(self, patient=self.patient)


class Recorder:
    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[Record, int]] = asyncio.Queue()
        self.pending = 0
        self.pending_bytes = 0
        self.idle = asyncio.Event()
        self.idle.set()
        self.roomy = asyncio.Event()  # set while the backlog of bytes is under the limit
        self.roomy.set()
        self.task: asyncio.Task | None = None
        self.delayed = 0  # records waiting for their retry
        self.hurry = asyncio.Event()  # set: write what is queued without lingering

    def submit(self, record: Record, attempt: int = 0, *, patient: bool = False) -> None:
        """Queue ``record``; a ``patient`` one may wait a moment for others to share its write."""
        self.pending += 1
        self.pending_bytes += record.pending_bytes()
        if self.pending_bytes > hot.STUDIO_RECORDER_MAX_PENDING_BYTES:
            self.roomy.clear()
        self.idle.clear()
        self.queue.put_nowait((record, attempt))
        if not patient or self.queue.qsize() >= BATCH:
            self.hurry.set()
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run())

    async def room(self) -> None:
        """Wait while records holding big media are waiting to be written.

        Without this, a burst of 4K images faster than the disk takes them would pile up in
        memory; with it, the requests that produce them slow down instead.
        """
        await self.roomy.wait()

    async def _run(self) -> None:
        while True:
            batch = [await self.queue.get()]
            linger = settings.STUDIO_RECORDER_LINGER_MS
            if linger > 0 and not self.hurry.is_set():
                timer = asyncio.get_running_loop().call_later(linger / 1000, self.hurry.set)
                await self.hurry.wait()
                timer.cancel()
            while len(batch) < BATCH and not self.queue.empty():
                batch.append(self.queue.get_nowait())
            if self.queue.empty():
                self.hurry.clear()  # the records that were in a hurry are all in this batch
            weight = sum(record.pending_bytes() for record, _ in batch)
            attempts = {id(record): attempt for record, attempt in batch}
            failed: list[Record] = [record for record, _ in batch]
            try:
                failed = await sync_to_async(_persist_batch, thread_sensitive=True)(failed)
            except Exception:  # the database itself is out of reach: every record waits for a retry
                logger.exception("persisting a batch of %d records failed", len(batch))
                Stats.failures += len(batch)
                recorder_metrics.failed(len(batch))
            finally:
                for record in failed:
                    self._retry(record, attempts[id(record)])
                self.pending -= len(batch)
                self.pending_bytes = max(self.pending_bytes - weight, 0)
                if self.pending_bytes <= hot.STUDIO_RECORDER_MAX_PENDING_BYTES:
                    self.roomy.set()
                if self.pending == 0:
                    self.idle.set()
                recorder_metrics.pending(sum(recorder.pending for recorder in _recorders.values()))
                batch = failed = []  # while it waits for the next record, the recorder holds none

    def _retry(self, record: Record, attempt: int) -> None:
        delays = settings.STUDIO_RECORDER_RETRY_DELAYS
        if attempt >= len(delays):
            Stats.lost += 1
            recorder_metrics.dropped()
            logger.error("giving up on a %s record after %d attempts; it is lost", type(record).__name__,
                         attempt + 1)
            return
        Stats.retried += 1
        recorder_metrics.retried()
        self.pending += 1
        self.idle.clear()
        self.delayed += 1
        asyncio.get_running_loop().call_later(delays[attempt], self._resubmit, record, attempt + 1)

    def _resubmit(self, record: Record, attempt: int) -> None:
        self.delayed -= 1
        self.pending -= 1
        self.submit(record, attempt)

    async def drain(self) -> None:
        self.hurry.set()
        await self.idle.wait()


def _persist_batch(batch: list[Record]) -> list[Record]:
    """Write a batch; returns the records that could not be written (logged and counted)."""
    # Drops the connection only when it is broken or past CONN_MAX_AGE, so a busy recorder
    # keeps one connection instead of reconnecting for every batch.
    close_old_connections()
    failed: list[Record] = []
    by_type: dict[type, list[Record]] = {}
    for record in batch:
        by_type.setdefault(type(record), []).append(record)
    if len(by_type) > 1:
        # Records of several kinds (a responses call's usage and its stored response) in one
        # transaction: one commit, where a transaction per kind made one commit each.
        try:
            with transaction.atomic():
                for kind, records in by_type.items():
                    kind.persist_batch(records)
            return failed
        except Exception:  # fall back to kind by kind, then one by one, as for a batch of one kind
            logger.exception("batch of %d records of %d kinds failed; retrying kind by kind", len(batch),
                             len(by_type))
    for kind, records in by_type.items():
        try:
            with transaction.atomic():
                kind.persist_batch(records)
            continue
        except Exception:  # fall back to one by one, so one bad record loses only itself
            if len(records) == 1:
                _failed(records[0], failed)
                continue
            logger.exception("batch of %d %s failed; retrying one by one", len(records), kind.__name__)
        for record in records:
            try:
                with transaction.atomic():  # all of a record or nothing, so a retry never doubles it
                    record.persist()
            except Exception:
                _failed(record, failed)
    return failed


def _failed(record: Record, failed: list[Record]) -> None:
    """Count and log a record that could not be written (called in its ``except`` block)."""
    Stats.failures += 1
    recorder_metrics.failed()
    failed.append(record)
    logger.exception("persisting a %s record failed; it will be tried again", type(record).__name__)


_recorders: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Recorder] = weakref.WeakKeyDictionary()
# The loop last asked about, held weakly, and its recorder: a server runs one loop, and a lookup
# in ``_recorders`` makes a weak reference to the loop every time (two of them a call).
_last: tuple[weakref.ref[asyncio.AbstractEventLoop], Recorder] | None = None


def get_recorder() -> Recorder:
    global _last
    loop = asyncio.get_running_loop()
    last = _last
    if last is not None and last[0]() is loop:
        return last[1]
    recorder = _recorders.get(loop)
    if recorder is None:
        recorder = _recorders[loop] = Recorder()
    _last = (weakref.ref(loop), recorder)
    return recorder


def submit(record: Record, *, patient: bool = False) -> None:
    get_recorder().submit(record, patient=patient)


async def drain() -> None:
    await get_recorder().drain()


async def room() -> None:
    await get_recorder().room()
