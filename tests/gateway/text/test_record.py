"""The text usage record: one row per call, written in batches with one last-use update per key."""

from __future__ import annotations

import pytest

from studio.core.errors import RateLimited
from studio.core.principal import Principal
from studio.gateway.text.record import TextRecord
from studio.models import ApiKey, UsageRecord

pytestmark = pytest.mark.django_db(transaction=True)


def record(account, model="omicron-4-mini", **kw) -> TextRecord:
    principal = Principal(user_id=account.user.id, key_id=account.key.id if account.key else None)
    return TextRecord(principal, model, "chat", kw.pop("stream", False), **kw)


def test_usage_row_reflects_the_call(alice):
    rec = record(alice, upstream_id=None, first_byte_ms=5, duration_ms=80)
    rec.usage(120, 30)
    row = rec.usage_row()
    assert (row.input_tokens, row.output_tokens, row.total_tokens, row.status_code) == (120, 30, 150, 200)
    assert (row.route, row.model_id, row.latency_ms, row.first_byte_ms) == ("chat", "omicron-4-mini", 80, 5)
    rec.error = RateLimited("slow down")
    assert rec.usage_row().status_code == 429


def test_persist_batch_writes_every_record_and_touches_each_key_once(alice, make_account, count_queries):
    bob, carol = make_account("bob"), make_account("carol")
    records = [record(alice), record(alice, model="epsilon-4.5"), record(bob)]
    for i, rec in enumerate(records):
        rec.usage(i, i + 1)
    count_queries["sql"].clear()
    TextRecord.persist_batch(records)
    writes = [sql.split()[0] for sql in count_queries["sql"] if sql.split()[0] in ("INSERT", "UPDATE")]
    # The 3 rows in two statements (a power of two of rows each: 2, then 1), then one UPDATE of the keys.
    assert writes == ["INSERT", "INSERT", "UPDATE"], count_queries["sql"]
    rows = sorted(UsageRecord.objects.values_list("user_id", "model_id", "output_tokens"))
    assert rows == sorted([(alice.user.id, "omicron-4-mini", 1), (alice.user.id, "epsilon-4.5", 2),
                           (bob.user.id, "omicron-4-mini", 3)])
    assert all(k.last_used_at is not None for k in ApiKey.objects.filter(id__in=[alice.key.id, bob.key.id]))
    assert ApiKey.objects.get(id=carol.key.id).last_used_at is None  # a key with no call in the batch


def test_persist_one_record(alice):
    rec = record(alice)
    rec.usage(1, 2)
    rec.persist()
    assert UsageRecord.objects.get().total_tokens == 3


def test_studio_calls_without_a_key_update_no_key(alice):
    rec = TextRecord(Principal(user_id=alice.user.id), "omicron-4-mini", "chat", False)
    TextRecord.persist_batch([rec])
    assert UsageRecord.objects.get().api_key_id is None
    assert ApiKey.objects.get(id=alice.key.id).last_used_at is None
