"""Rows written in bulk, as ``bulk_create`` writes them but without its per-row and per-value work.

The recorder's records (``studio.gateway.recording``) write their rows here, in its worker thread:
usage rows, stored responses, generations and their pictures. A batch's statement (its text, the
fields, which values each column sends as they are) is worked out once per table and kind of
batch and kept (``_statement``); each batch then only gathers its values.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import connections, models, router
from django.db.backends.base.operations import BaseDatabaseOperations
from django.db.models.constants import OnConflict
from django.utils import timezone

from studio.core.memo import Memo

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
    alias = router.db_for_write(model)
    connection = connections[alias]
    # A key chosen by the caller (a UUID) is written; else the database picks.
    statement = _statements[model, alias, model._meta.pk.attname in rows[0], tuple(replace)]
    keys = rows[0].keys()
    given = [name for name in statement.names if name in keys]
    alike = all(row.keys() == keys for row in rows)  # the usual batch: every row names the same fields
    by_name: dict[str, Sequence[Any]] = {}
    if alike and given:
        found = list(map(operator.itemgetter(*given), rows))
        by_name = dict(zip(given, zip(*found, strict=True) if len(given) > 1 else [found], strict=True))
    columns = []
    for field, name, plain, shared in zip(statement.fields, statement.names, statement.plain, statement.shared,
                                          strict=True):
        values = by_name.get(name)
        if values is not None:
            columns.append(values if name in prepared else _column(field, values, connection, plain, shared))
        elif alike and shared:  # no row has it: one default for them all
            columns.append([field.get_db_prep_save(field.get_default(), connection)] * len(rows))
        else:
            columns.append(_column(field, [row.get(name, _MISSING) for row in rows], connection, plain, shared,
                                   prepared=name in prepared))
    values = list(zip(*columns, strict=True))
    size = statement.size
    start = 0
    with connection.cursor() as cursor:
        while start < len(values):
            while size > len(values) - start:
                size //= 2
            chunk = values[start:start + size]
            _execute(connection, cursor, statement, size, list(itertools.chain.from_iterable(chunk)))
            start += size


def _execute(connection: Any, cursor: Any, statement: _Statement, rows: int, params: list[Any]) -> None:
    """Run the statement of ``rows`` rows (``run``)."""
    native = statement.native
    run(connection, cursor, statement.texts[rows], native[rows] if native is not None else None, params)


def run(connection: Any, cursor: Any, text: str, native: str | None, params: list[Any]) -> None:
    """Run ``text``. On SQLite its text in the module's own ``?`` style (``native``) goes straight
    to the module: Django's cursor would turn each ``%s`` into ``?`` with a regular expression on
    every run, a fifth of the recorder thread's work on a batch of a streamed responses call's
    rows. Django's error translation and broken-transaction check are kept; with an execute
    wrapper installed or queries being logged (tests, debugging), Django's cursor runs it, so they
    see it."""
    if native is not None and not connection.execute_wrappers and not connection.queries_logged:
        run_native(connection, native, params)
    else:
        cursor.execute(text, params)


def _module_style(connection: Any, names: str) -> bool:
    """Whether statements naming ``names`` are also made in the module's own ``?`` style (SQLite's;
    a ``%`` of a name would need its escape undone)."""
    return connection.vendor == "sqlite" and "%" not in names


def run_native(connection: Any, sql: str, params: list[Any]) -> None:
    """``sql``, in the database module's own placeholder style, run on ``connection``'s module
    connection, as Django's cursor runs a statement: in a transaction that is not broken, the
    module's errors raised as Django's."""
    connection.validate_no_broken_transaction()
    with connection.wrap_database_errors:
        connection.connection.execute(sql, params)


@dataclass(frozen=True, slots=True)
class _Statement:
    """What every batch of rows of one table written one way shares: the fields written, what each
    column sends as it is (``_plain_type``) and whether its default may be shared
    (``_shared_default``), and the statement's text for each number of rows it holds."""

    fields: tuple[models.Field, ...]
    names: tuple[str, ...]  # the fields' attnames
    plain: tuple[type | None, ...]
    shared: tuple[bool, ...]
    size: int  # rows per statement at most
    texts: dict[int, str]  # rows in a statement → its text
    native: dict[int, str] | None  # the same in the module's ``?`` style (SQLite), if it has one


def _statement(key: tuple[type[models.Model], str, bool, tuple[str, ...]]) -> _Statement:
    model, alias, given_pk, replace = key
    connection = connections[alias]
    fields = tuple(f for f in model._meta.concrete_fields if not f.primary_key or given_pk)
    quote = connection.ops.quote_name
    head = f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) VALUES "
    row_sql = f"({', '.join(['%s'] * len(fields))})"
    tail = ""
    if replace:
        updated = [model._meta.get_field(name).column for name in replace]
        tail = " " + connection.ops.on_conflict_suffix_sql(list(fields), OnConflict.UPDATE, updated,
                                                           [model._meta.pk.column])
    # Many rows per statement (as ``bulk_create`` writes them), not ``executemany``'s one per row:
    # SQLite's module lets go of the interpreter's lock for every step it makes, so each row it
    # wrote was one more hand-over of the lock between this thread and the event loop's, which
    # cost both of them more than the row's write (the gateway's CPU per streamed call fell by a
    # fifth to a quarter without them). Statements hold a power of two of rows (a batch of 37:
    # 32, 4 and 1), so the few texts there are stay prepared in the connection's statement cache.
    # (The backend's limit asked for a batch of the most rows a statement holds anyway.)
    most = min(connection.ops.bulk_batch_size(list(fields), [()] * MAX_ROWS), MAX_PARAMS // len(fields), MAX_ROWS)
    size = 1 << (max(1, most).bit_length() - 1)
    texts = {rows: head + ", ".join([row_sql] * rows) + tail for rows in (1 << n for n in range(size.bit_length()))}
    native = {rows: text.replace("%s", "?") for rows, text in texts.items()} if _module_style(connection, head + tail) else None
    return _Statement(fields, tuple(f.attname for f in fields), tuple(_plain_type(f, connection) for f in fields),
                      tuple(_shared_default(f) for f in fields), size, texts, native)


# (model, database alias, whether the rows give the primary key, the fields a conflict updates) →
# the statement: worked out once, where it cost more than a small batch's values.
_statements: Memo[tuple[type[models.Model], str, bool, tuple[str, ...]], _Statement] = Memo(_statement)


def _column(field: models.Field, values: Sequence[Any], connection: Any, plain: type | None, shared_default: bool,
            *, prepared: bool = False) -> Sequence[Any]:
    """A column's values as the database takes them (``_MISSING``: the field's default, shared by
    the rows when ``shared_default``; ``prepared``: every other value is as the database takes it
    already; ``plain``: ``_plain_type`` of the field)."""
    if _unchanged(values, plain):
        return values
    shared: list[Any] = []  # a default the rows share, converted once for the batch
    out = []
    for value in values:
        if value is _MISSING:
            if not shared:
                converted = field.get_db_prep_save(field.get_default(), connection)
                if not shared_default:
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


def _touch_texts(key: tuple[str, int]) -> tuple[str, str | None]:
    """The ``UPDATE`` of ``touch_keys`` for ``count`` keys on database ``alias`` (``key``), and its
    text in the module's own ``?`` style (SQLite), as ``_statement`` makes them."""
    from studio.models import ApiKey

    alias, count = key
    connection = connections[alias]
    quote = connection.ops.quote_name
    table, column = quote(ApiKey._meta.db_table), quote(ApiKey._meta.get_field("last_used_at").column)
    pk = quote(ApiKey._meta.pk.column)
    text = f"UPDATE {table} SET {column} = %s WHERE {pk} IN ({', '.join(['%s'] * count)})"
    return text, text.replace("%s", "?") if _module_style(connection, table + column + pk) else None


_touches: Memo[tuple[str, int], tuple[str, str | None]] = Memo(_touch_texts)


def touch_keys(key_ids: set[int]) -> None:
    """Mark the API keys ``key_ids`` as used now: one ``UPDATE``, written as the ORM would write
    it but without building a query set for it (which cost three times the statement), its text
    made once per number of keys and run as a batch's statements are (``run``)."""
    if not key_ids:
        return
    from studio.models import ApiKey

    alias = router.db_for_write(ApiKey)
    connection = connections[alias]
    text, native = _touches[alias, len(key_ids)]
    with connection.cursor() as cursor:
        now = ApiKey._meta.get_field("last_used_at").get_db_prep_save(timezone.now(), connection)
        run(connection, cursor, text, native, [now, *sorted(key_ids)])
