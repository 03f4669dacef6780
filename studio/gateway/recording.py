"""Writing records off the response path.

A /v1 request hands its record to ``submit()`` and returns; a background task per event loop
collects records and persists them in batches in a worker thread. ``drain()`` waits until
everything submitted so far is written (tests, shutdown).

A record that cannot be written is never dropped quietly: the failure is logged with the
record's kind and counted (``failures``), and the record is tried again after a growing delay
(``STUDIO_RECORDER_RETRY_DELAYS``); only after the last try is it given up, logged as lost.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import operator
import time
import weakref
from collections.abc import Collection, Sequence
from decimal import Decimal
from typing import Any, ClassVar, Protocol

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections, connections, models, router, transaction
from django.db.backends.base.operations import BaseDatabaseOperations
from django.db.models.constants import OnConflict
from django.utils import timezone

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


class Record(Protocol):
    """Anything with ``persist()``; a class may also offer ``persist_batch(records)`` to write
    many of its records with a few statements (bulk inserts) instead of one round trip each."""

    def persist(self) -> None:
        """Write this record (runs in the recorder's worker thread)."""


class TimedRecord:
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


def _weight(record: Record) -> int:
    """Bytes a record holds until written (``pending_bytes()`` if it has one, else nothing much)."""
    weigh = getattr(record, "pending_bytes", None)
    return weigh() if weigh is not None else 0


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
        self.pending_bytes += _weight(record)
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
            weight = sum(_weight(record) for record, _ in batch)
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
    for kind, records in by_type.items():
        bulk = getattr(kind, "persist_batch", None)
        if bulk is not None:
            try:
                with transaction.atomic():
                    bulk(records)
                continue
            except Exception:  # fall back to one by one, so one bad record loses only itself
                logger.exception("batch of %d %s failed; retrying one by one", len(records), kind.__name__)
        for record in records:
            try:
                with transaction.atomic():  # all of a record or nothing, so a retry never doubles it
                    record.persist()
            except Exception:
                Stats.failures += 1
                recorder_metrics.failed()
                failed.append(record)
                logger.exception("persisting a %s record failed; it will be tried again", kind.__name__)
    return failed


_INTEGER_TYPES = frozenset({"IntegerField", "BigIntegerField", "SmallIntegerField", "PositiveIntegerField",
                            "PositiveBigIntegerField", "PositiveSmallIntegerField", "AutoField", "BigAutoField",
                            "SmallAutoField"})
_PLAIN_TYPES = {"CharField": str, "TextField": str, "FloatField": float, "BooleanField": bool}
_NONE = type(None)
MAX_PARAMS = 65535  # bind parameters in one statement: PostgreSQL's protocol takes no more
MAX_ROWS = 64  # rows in one statement
_MISSING = object()  # a row without a value for a column: the field's default goes in


def _plain_type(field: models.Field, connection: Any) -> type | None:
    """The Python type whose values ``field`` sends to the database unchanged, if there is one:
    text, floats and booleans; integers (and keys to integer keys) where the backend does not
    wrap them (psycopg 3 binds each as its own integer type); finite decimals where the backend
    takes them as they are (every one of Django's: ``DecimalField`` only makes a ``Decimal`` of
    the value again)."""
    target = field.target_field if field.is_relation else field
    kind = target.get_internal_type()
    ops = type(connection.ops)
    if kind in _INTEGER_TYPES:
        unchanged = (ops.adapt_integerfield_value is BaseDatabaseOperations.adapt_integerfield_value
                     and ops.validate_autopk_value is BaseDatabaseOperations.validate_autopk_value)
        return int if unchanged else None
    if kind == "DecimalField" and not field.is_relation:
        return Decimal if ops.adapt_decimalfield_value is BaseDatabaseOperations.adapt_decimalfield_value else None
    return _PLAIN_TYPES.get(kind) if not field.is_relation else None


def _as_is(value: Any, plain: type | None) -> bool:
    """Whether ``value`` goes to the database as it is: of type ``plain`` or None (a decimal
    column: a finite decimal only, as the field's own conversion refuses the others)."""
    if plain is Decimal:
        return type(value) is Decimal and value.is_finite()
    return plain is not None and (value is None or type(value) is plain)


def _unchanged(values: Sequence[Any], plain: type | None) -> bool:
    """``_as_is`` of every value of a column, checked for the whole column at once."""
    if plain is None:
        return False
    kinds = set(map(type, values))
    if plain is Decimal:
        return kinds == {Decimal} and all(map(Decimal.is_finite, values))
    return kinds <= {plain, _NONE}


def insert_rows(model: type[models.Model], rows: list[dict[str, Any]], *, prepared: Collection[str] = (),
                replace: Sequence[str] = ()) -> None:
    """Insert ``rows`` (values by field attname, the primary key too when the first row has it;
    the model's defaults fill the rest) in a few statements of many rows each: the rows
    ``bulk_create`` writes, without a model instance per row and the query compiler's work per
    value. No signals are sent (nor does ``bulk_create`` send any). The values are gathered
    column by column: a column whose values are all of a type its field sends unchanged (``str``
    for a text field, ``int`` for an integer field, ``None`` for either) goes as it is; in any
    other, each value of another type is converted by the field. The columns named in
    ``prepared`` are sent as they are (JSON the caller encoded already). With ``replace``, a row
    whose primary key is taken updates those fields of the row there instead (``bulk_create``'s
    ``update_conflicts``)."""
    if not rows:
        return
    connection = connections[router.db_for_write(model)]
    pk = model._meta.pk.attname
    given_pk = pk in rows[0]  # a key chosen by the caller (a UUID) is written; else the database picks
    fields = [f for f in model._meta.concrete_fields if not f.primary_key or given_pk]
    quote = connection.ops.quote_name
    head = f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) VALUES "
    row_sql = f"({', '.join(['%s'] * len(fields))})"
    tail = ""
    if replace:
        updated = [model._meta.get_field(name).column for name in replace]
        tail = " " + connection.ops.on_conflict_suffix_sql(fields, OnConflict.UPDATE, updated,
                                                           [model._meta.pk.column])
    keys = rows[0].keys()
    given = [f.attname for f in fields if f.attname in keys]
    alike = all(row.keys() == keys for row in rows)  # the usual batch: every row names the same fields
    by_name: dict[str, Sequence[Any]] = {}
    if alike and given:
        found = list(map(operator.itemgetter(*given), rows))
        by_name = dict(zip(given, zip(*found, strict=True) if len(given) > 1 else [found], strict=True))
    columns = []
    for field in fields:
        values = by_name.get(field.attname)
        if values is not None:
            columns.append(values if field.attname in prepared else _column(field, values, connection))
        elif alike and _shared_default(field):  # no row has it: one default for them all
            columns.append([field.get_db_prep_save(field.get_default(), connection)] * len(rows))
        else:
            columns.append(_column(field, [row.get(field.attname, _MISSING) for row in rows], connection,
                                   prepared=field.attname in prepared))
    values = list(zip(*columns, strict=True))
    # Many rows per statement (as ``bulk_create`` writes them), not ``executemany``'s one per row:
    # SQLite's module lets go of the interpreter's lock for every step it makes, so each row it
    # wrote was one more hand-over of the lock between this thread and the event loop's, which
    # cost both of them more than the row's write (the gateway's CPU per streamed call fell by a
    # fifth to a quarter without them). Statements hold a power of two of rows (a batch of 37:
    # 32, 4 and 1), so the few texts there are stay prepared in the connection's statement cache.
    size = 1 << (max(1, min(connection.ops.bulk_batch_size(fields, values), MAX_PARAMS // len(fields),
                            MAX_ROWS)).bit_length() - 1)
    start = 0
    with connection.cursor() as cursor:
        while start < len(values):
            while size > len(values) - start:
                size //= 2
            chunk = values[start:start + size]
            cursor.execute(head + ", ".join([row_sql] * size) + tail, list(itertools.chain.from_iterable(chunk)))
            start += size


def _column(field: models.Field, values: Sequence[Any], connection: Any, *, prepared: bool = False) -> Sequence[Any]:
    """A column's values as the database takes them (``_MISSING``: the field's default;
    ``prepared``: every other value is as the database takes it already)."""
    plain = _plain_type(field, connection)
    if _unchanged(values, plain):
        return values
    shared: list[Any] = []  # a default the rows share, converted once for the batch
    out = []
    for value in values:
        if value is _MISSING:
            if not shared:
                converted = field.get_db_prep_save(field.get_default(), connection)
                if not _shared_default(field):
                    out.append(converted)
                    continue
                shared.append(converted)
            out.append(shared[0])
        elif prepared or _as_is(value, plain):
            out.append(value)
        else:
            out.append(field.get_db_prep_save(value, connection))
    return out


def _shared_default(field: models.Field) -> bool:
    """Whether the rows of one batch may share ``field``'s default: a constant, or the time of
    writing (``timezone.now``: the rows of a batch are written at one moment). Any other callable
    (a new UUID, say) is called for each row."""
    default = field.default
    return not callable(default) or default is timezone.now


def insert_objects(objects: list[models.Model]) -> None:
    """Insert new instances of one model as ``insert_rows`` does and mark them saved, as
    ``bulk_create`` does: for new rows whose fields (a stored file included) are all set
    already, of a model that no ``save()`` override or signal receiver needs to see."""
    if not objects:
        return
    model = type(objects[0])
    fields = [f.attname for f in model._meta.concrete_fields]
    insert_rows(model, [{name: getattr(obj, name) for name in fields} for obj in objects])
    db = router.db_for_write(model)
    for obj in objects:
        obj._state.adding, obj._state.db = False, db


def touch_keys(key_ids: set[int]) -> None:
    """Mark the API keys ``key_ids`` as used now: one ``UPDATE``, written as the ORM would write
    it but without building a query set for it (which cost three times the statement)."""
    if not key_ids:
        return
    from studio.models import ApiKey

    connection = connections[router.db_for_write(ApiKey)]
    quote = connection.ops.quote_name
    field = ApiKey._meta.get_field("last_used_at")
    sql = (f"UPDATE {quote(ApiKey._meta.db_table)} SET {quote(field.column)} = %s "
           f"WHERE {quote(ApiKey._meta.pk.column)} IN ({', '.join(['%s'] * len(key_ids))})")
    with connection.cursor() as cursor:
        cursor.execute(sql, [field.get_db_prep_save(timezone.now(), connection), *sorted(key_ids)])


_recorders: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Recorder] = weakref.WeakKeyDictionary()


def get_recorder() -> Recorder:
    loop = asyncio.get_running_loop()
    recorder = _recorders.get(loop)
    if recorder is None:
        recorder = _recorders[loop] = Recorder()
    return recorder


def submit(record: Record, *, patient: bool = False) -> None:
    get_recorder().submit(record, patient=patient)


async def drain() -> None:
    await get_recorder().drain()


async def room() -> None:
    await get_recorder().room()
