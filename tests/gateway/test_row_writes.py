"""Rows written in bulk as ``bulk_create`` would write them: values converted as the fields do,
defaults, prepared columns, conflicts updated, a batch in a few statements of a few texts."""

from __future__ import annotations

import pytest
from django.utils import timezone

from studio.gateway import row_writes

pytestmark = pytest.mark.django_db(transaction=True)


def test_insert_rows_writes_what_bulk_create_would(alice, count_queries):
    from decimal import Decimal

    from studio.models import UsageRecord

    rows = [{"user_id": alice.user.id, "api_key_id": alice.key.id, "model_id": "omicron-4-mini", "route": "chat",
             "input_tokens": 3, "cost_usd": Decimal("0.000001234")},
            {"user_id": alice.user.id, "model_id": "epsilon-4.5", "route": "messages", "status_code": 429}]
    count_queries["sql"].clear()
    row_writes.insert_rows(UsageRecord, rows)
    assert [sql.split()[0] for sql in count_queries["sql"]] == ["INSERT"]
    first, second = UsageRecord.objects.order_by("id")
    assert (first.api_key_id, first.input_tokens, first.cost_usd, first.status_code) == (
        alice.key.id, 3, Decimal("0.000001234"), 200)
    assert (second.api_key_id, second.route, second.status_code, second.output_tokens) == (None, "messages", 429, 0)
    assert first.created is not None and first.created.tzinfo is not None


def test_insert_rows_converts_values_of_other_types_as_the_fields_do(alice):
    from decimal import Decimal

    from studio.models import UsageRecord

    row_writes.insert_rows(UsageRecord, [
        {"user_id": str(alice.user.id), "model_id": "omicron-4-mini", "route": "chat", "input_tokens": "7",
         "output_tokens": 2.0, "video_seconds": 3, "cost_usd": 0.5, "latency_ms": True},
        {"user_id": alice.user.id, "model_id": "omicron-4-mini", "route": "chat", "input_tokens": 7,
         "output_tokens": 2, "video_seconds": 3.0, "cost_usd": Decimal("0.5"), "latency_ms": 1}])
    converted, plain = UsageRecord.objects.order_by("id")
    for record in (converted, plain):
        assert (record.user_id, record.input_tokens, record.output_tokens, record.video_seconds, record.cost_usd,
                record.latency_ms) == (alice.user.id, 7, 2, 3.0, Decimal("0.5"), 1)


def test_insert_rows_refuses_a_decimal_the_field_refuses_and_writes_nothing(alice):
    from decimal import Decimal

    from django.core.exceptions import ValidationError

    from studio.models import UsageRecord

    for bad in (Decimal("NaN"), Decimal("Infinity")):
        with pytest.raises(ValidationError):
            row_writes.insert_rows(UsageRecord, [
                {"user_id": alice.user.id, "model_id": "omicron-4-mini", "route": "chat", "cost_usd": Decimal("1")},
                {"user_id": alice.user.id, "model_id": "omicron-4-mini", "route": "chat", "cost_usd": bad}])
    assert not UsageRecord.objects.exists()


def test_insert_rows_of_one_named_field_and_of_rows_naming_different_fields(alice):
    from studio.models import UsageRecord

    row_writes.insert_rows(UsageRecord, [{"model_id": "omicron-4-mini"}, {"model_id": "epsilon-4.5"}])
    row_writes.insert_rows(UsageRecord, [{"model_id": "a", "input_tokens": 5}, {"route": "chat", "model_id": "b"},
                                         {"output_tokens": 9, "model_id": "c", "ignored": object()}])
    rows = [(r.model_id, r.route, r.input_tokens, r.output_tokens, r.status_code)
            for r in UsageRecord.objects.order_by("id")]
    assert rows == [("omicron-4-mini", "", 0, 0, 200), ("epsilon-4.5", "", 0, 0, 200), ("a", "", 5, 0, 200),
                    ("b", "chat", 0, 0, 200), ("c", "", 0, 9, 200)]


def test_insert_rows_writes_a_batch_in_a_few_statements_of_a_few_texts(alice, count_queries):
    from studio.models import UsageRecord

    inserts: list[str] = []
    for batch in (300, 37, 300):
        rows = [{"user_id": alice.user.id, "model_id": f"m{n}", "route": "chat", "input_tokens": n}
                for n in range(batch)]
        count_queries["sql"].clear()
        row_writes.insert_rows(UsageRecord, rows)
        sent = [sql for sql in count_queries["sql"] if sql.startswith("INSERT")]
        assert len(sent) <= 12  # a few statements, not one per row
        inserts += sent
    assert len(set(inserts)) <= 7  # the same few texts each time: they stay prepared
    written = list(UsageRecord.objects.order_by("id").values_list("model_id", "input_tokens"))
    assert written == [(f"m{n}", n) for batch in (300, 37, 300) for n in range(batch)]


def test_insert_rows_with_replace_updates_only_the_named_fields_of_a_taken_key(alice, count_queries):
    from studio.models import UsageRecord

    row_writes.insert_rows(UsageRecord, [{"id": 7, "model_id": "a", "route": "chat", "input_tokens": 1}])
    count_queries["sql"].clear()
    row_writes.insert_rows(UsageRecord, [{"id": 7, "model_id": "b", "route": "messages", "input_tokens": 2},
                                         {"id": 8, "model_id": "c", "route": "responses", "input_tokens": 3}],
                           replace=["model_id", "input_tokens"])
    assert [sql.split()[0] for sql in count_queries["sql"]] == ["INSERT"]
    rows = [(r.id, r.model_id, r.route, r.input_tokens) for r in UsageRecord.objects.order_by("id")]
    assert rows == [(7, "b", "chat", 2), (8, "c", "responses", 3)]  # the route of 7 was not named: kept


def test_insert_rows_sends_prepared_columns_as_they_are_in_rows_alike_or_not(alice):
    from studio.models import StoredResponse

    user = alice.user.id
    row_writes.insert_rows(StoredResponse, [{"id": "r1", "user_id": user, "model_id": "m", "response": '{"n": 1}'},
                                            {"id": "r2", "user_id": user, "model_id": "m", "response": '{"n": 2}'}],
                           prepared=["response"])
    # Rows naming different fields: a prepared value still goes as it is, a missing one gets the default.
    row_writes.insert_rows(StoredResponse, [{"id": "r3", "user_id": user, "model_id": "m", "response": '{"n": 3}',
                                            "context": '[{"role": "user"}]'},
                                            {"id": "r4", "user_id": user, "model_id": "m", "response": '{"n": 4}'}],
                           prepared=["response", "context"])
    rows = {r.id: (r.response, r.context) for r in StoredResponse.objects.all()}
    assert rows == {"r1": ({"n": 1}, []), "r2": ({"n": 2}, []), "r3": ({"n": 3}, [{"role": "user"}]),
                    "r4": ({"n": 4}, [])}


def test_a_column_goes_as_it_is_only_when_every_value_is_of_its_plain_type():
    from decimal import Decimal

    assert row_writes._unchanged(["a", None, "b"], str)
    assert not row_writes._unchanged(["a", 1], str)
    assert not row_writes._unchanged([1, True], int)  # a bool is converted by an integer field
    assert row_writes._unchanged([Decimal("0.1"), Decimal("2")], Decimal)
    assert not row_writes._unchanged([Decimal("0.1"), Decimal("NaN")], Decimal)
    assert not row_writes._unchanged([Decimal("0.1"), None], Decimal)  # value by value: None is checked alone
    assert not row_writes._unchanged([Decimal("0.1"), 0.1], Decimal)
    assert not row_writes._unchanged(["a"], None)
    for values, plain in ((["a", None], str), ([1, True], int), ([Decimal("0.1"), Decimal("NaN"), None], Decimal),
                          ([0.1, 2], float)):  # one value at a time, the same rule
        assert [row_writes._as_is(v, plain) for v in values] == [row_writes._unchanged([v], plain) for v in values]


def test_insert_rows_gives_the_rows_of_a_batch_one_time_of_writing_and_their_defaults(alice):
    from studio.models import UsageRecord

    before = timezone.now()
    row_writes.insert_rows(UsageRecord, [
        {"user_id": alice.user.id, "model_id": "omicron-4-mini", "route": "chat", "input_tokens": n}
        for n in range(5)])
    rows = list(UsageRecord.objects.order_by("id"))
    assert [r.input_tokens for r in rows] == [0, 1, 2, 3, 4]
    assert {(r.status_code, r.output_tokens, r.images, r.video_seconds) for r in rows} == {(200, 0, 0, 0.0)}
    assert len({r.created for r in rows}) == 1  # written at one moment
    assert before <= rows[0].created <= timezone.now()


def test_only_constant_defaults_and_the_time_of_writing_are_shared_by_a_batch():
    from studio.models import EditSession, UsageRecord
    from studio.models.catalog import PlatformModel

    assert row_writes._shared_default(UsageRecord._meta.get_field("created"))
    assert row_writes._shared_default(UsageRecord._meta.get_field("status_code"))
    assert not row_writes._shared_default(EditSession._meta.get_field("id"))  # a new UUID for each row
    assert not row_writes._shared_default(PlatformModel._meta.get_field("capabilities"))  # a dict of its own


def test_on_sqlite_a_batch_goes_to_the_module_in_its_own_placeholders_with_djangos_errors(alice, monkeypatch):
    """Django's SQLite cursor rewrites every ``%s`` of a statement with a regular expression; the
    row writer sends its statements in ``?`` style to the module instead, and its errors still
    arrive as Django's."""
    from django.db import IntegrityError, connection
    from django.db.backends.sqlite3.base import SQLiteCursorWrapper

    from studio.models import UsageRecord

    if connection.vendor != "sqlite":
        pytest.skip("the rewrite is SQLite's")

    def rewritten(*_, **__):
        raise AssertionError("the statement went through Django's placeholder rewrite")

    rows = [{"id": n, "user_id": alice.user.id, "model_id": f"m{n}", "route": "chat", "input_tokens": n}
            for n in range(1, 38)]
    with monkeypatch.context() as patched:
        patched.setattr(SQLiteCursorWrapper, "convert_query", rewritten)
        row_writes.insert_rows(UsageRecord, rows)
    assert list(UsageRecord.objects.order_by("id").values_list("id", "model_id")) == [
        (n, f"m{n}") for n in range(1, 38)]
    with pytest.raises(IntegrityError):
        row_writes.insert_rows(UsageRecord, rows[:1])  # a taken key, without ``replace``
    assert UsageRecord.objects.count() == 37


def test_on_sqlite_a_keys_last_use_goes_to_the_module_in_its_own_placeholders(alice, make_account, monkeypatch):
    from django.db import connection
    from django.db.backends.sqlite3.base import SQLiteCursorWrapper

    from studio.models import ApiKey

    if connection.vendor != "sqlite":
        pytest.skip("the rewrite is SQLite's")

    def rewritten(*_, **__):
        raise AssertionError("the statement went through Django's placeholder rewrite")

    bob, carol = make_account("bob"), make_account("carol")
    before = timezone.now()
    with monkeypatch.context() as patched:
        patched.setattr(SQLiteCursorWrapper, "convert_query", rewritten)
        row_writes.touch_keys({alice.key.id, bob.key.id})
    used = dict(ApiKey.objects.values_list("id", "last_used_at"))
    assert used[alice.key.id] >= before and used[bob.key.id] >= before
    assert used[carol.key.id] is None  # not among the keys used
