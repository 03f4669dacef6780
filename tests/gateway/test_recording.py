"""Writing records off the response path: batches per record type, one bad record loses only itself,
failed records retried, counted and logged, back-pressure by bytes held, drain, and the timing every
call record shares."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass, field

import pytest
from django.utils import timezone

from studio.core.errors import UpstreamError
from studio.gateway import recording

pytestmark = pytest.mark.django_db(transaction=True)

written: list[tuple[str, object]] = []


@dataclass
class Plain:
    """A record with ``persist()`` only."""

    name: str
    fail: bool = False

    def persist(self) -> None:
        if self.fail:
            raise RuntimeError("cannot write")
        written.append(("one", self.name))


@dataclass
class Batched(Plain):
    """A record that writes many at once; the batch fails if any record in it is bad."""

    @classmethod
    def persist_batch(cls, records) -> None:
        if any(r.fail for r in records):
            raise RuntimeError("batch refused")
        written.append(("batch", tuple(r.name for r in records)))


@dataclass
class Heavy:
    """A record holding media bytes until written; its write waits for ``gate``."""

    size: int
    gate: threading.Event = field(default_factory=threading.Event)

    def pending_bytes(self) -> int:
        return self.size

    def persist(self) -> None:
        assert self.gate.wait(10)
        written.append(("heavy", self.size))


@pytest.fixture(autouse=True)
def _clean():
    written.clear()
    yield
    written.clear()


async def test_submitted_records_are_written_by_drain_time(transactional_db):
    for name in ("a", "b", "c"):
        recording.submit(Plain(name))
    await recording.drain()
    assert sorted(written) == [("one", "a"), ("one", "b"), ("one", "c")]


async def test_records_of_a_batching_type_are_written_together(transactional_db):
    for i in range(5):
        recording.submit(Batched(str(i)))
    recording.submit(Plain("p"))
    await recording.drain()
    batches = [names for kind, names in written if kind == "batch"]
    assert sorted(n for names in batches for n in names) == ["0", "1", "2", "3", "4"]
    assert len(batches) < 5  # several records per statement, not one round trip each
    assert ("one", "p") in written


async def test_a_bad_record_loses_only_itself(transactional_db, settings, stats):
    settings.STUDIO_RECORDER_RETRY_DELAYS = (0.01,)
    recording.submit(Batched("good-1"))
    recording.submit(Batched("bad", fail=True))
    recording.submit(Batched("good-2"))
    recording.submit(Plain("bad-plain", fail=True))
    recording.submit(Plain("good-plain"))
    await recording.drain()
    assert ("one", "good-1") in written and ("one", "good-2") in written and ("one", "good-plain") in written
    assert all("bad" not in str(entry) for entry in written)
    assert stats.lost == 2  # the two bad ones, each tried twice, then given up


async def test_back_pressure_by_bytes(transactional_db, settings):
    settings.STUDIO_RECORDER_MAX_PENDING_BYTES = 1000
    small = Heavy(10)
    small.gate.set()
    recording.submit(small)
    await asyncio.wait_for(recording.room(), 1)  # under the limit: no waiting
    big = Heavy(5000)
    recording.submit(big)
    waiting = asyncio.create_task(recording.room())
    await asyncio.sleep(0.2)
    assert not waiting.done()  # the producer of the next big answer is held back
    big.gate.set()
    await asyncio.wait_for(waiting, 10)
    await recording.drain()
    assert ("heavy", 5000) in written
    assert recording.get_recorder().pending_bytes == 0 and recording.get_recorder().pending == 0


async def test_one_recorder_per_event_loop(transactional_db):
    assert recording.get_recorder() is recording.get_recorder()

    def other_loop():
        async def make():
            return recording.get_recorder()
        return asyncio.run(make())

    assert await asyncio.to_thread(other_loop) is not recording.get_recorder()


@dataclass
class Call(recording.TimedRecord):
    started: float = field(default_factory=time.perf_counter)
    first_byte_ms: int | None = None
    duration_ms: int | None = None
    error: object = None
    submitted: bool = False

    def persist(self) -> None:
        written.append(("call", self.error))


async def test_timed_record_first_chunk_once_and_finish_once(transactional_db):
    call = Call(started=time.perf_counter() - 0.05)
    call.first_chunk()
    first = call.first_byte_ms
    assert first >= 50
    await asyncio.sleep(0.02)
    call.first_chunk()
    assert call.first_byte_ms == first
    call.finish()
    call.finish()
    call.fail(UpstreamError("late"))  # already handed over: not submitted again
    await recording.drain()
    assert [e for e in written if e[0] == "call"] == [("call", call.error)]
    assert call.duration_ms >= first


async def test_fail_records_the_error_and_submits(transactional_db):
    call = Call()
    error = UpstreamError("down")
    call.fail(error)
    await recording.drain()
    assert call.submitted and written == [("call", error)]


# -- retries: a record that cannot be written is retried, counted and logged, never dropped quietly --


@dataclass(eq=False)
class Flaky:
    """Fails its first ``failures`` writes, then succeeds; remembers every attempt."""

    failures: int
    attempts: list[int] = field(default_factory=list)

    def persist(self) -> None:
        self.attempts.append(1)
        if len(self.attempts) <= self.failures:
            raise ValueError("A string literal cannot contain NUL (0x00) characters.")


@pytest.fixture
def stats(monkeypatch):
    for name in ("failures", "retried", "lost"):
        monkeypatch.setattr(recording.Stats, name, 0)
    return recording.Stats


async def test_a_failed_record_is_tried_again_until_it_is_written(stats, caplog):
    record = Flaky(failures=2)
    with caplog.at_level(logging.ERROR, logger="studio.gateway.recording"):
        recording.submit(record)
        await recording.drain()
    assert len(record.attempts) == 3
    assert stats.failures == 2 and stats.retried == 2 and stats.lost == 0
    assert sum("will be tried again" in r.getMessage() for r in caplog.records) == 2


async def test_a_record_that_never_writes_is_logged_as_lost_after_the_last_try(stats, caplog, settings):
    settings.STUDIO_RECORDER_RETRY_DELAYS = (0.01, 0.01, 0.01)
    record = Flaky(failures=99)
    with caplog.at_level(logging.ERROR, logger="studio.gateway.recording"):
        recording.submit(record)
        await recording.drain()
    assert len(record.attempts) == 4
    assert stats.lost == 1
    assert any("is lost" in r.getMessage() and "Flaky" in r.getMessage() for r in caplog.records)


async def test_one_bad_record_does_not_hold_back_the_others(stats):
    good, bad = Flaky(failures=0), Flaky(failures=1)
    recording.submit(bad)
    recording.submit(good)
    await recording.drain()
    assert len(good.attempts) == 1 and len(bad.attempts) == 2


def test_insert_rows_writes_what_bulk_create_would(alice, count_queries):
    from decimal import Decimal

    from studio.models import UsageRecord

    rows = [{"user_id": alice.user.id, "api_key_id": alice.key.id, "model_id": "omicron-4-mini", "route": "chat",
             "input_tokens": 3, "cost_usd": Decimal("0.000001234")},
            {"user_id": alice.user.id, "model_id": "epsilon-4.5", "route": "messages", "status_code": 429}]
    count_queries["sql"].clear()
    recording.insert_rows(UsageRecord, rows)
    assert [sql.split()[0] for sql in count_queries["sql"]] == ["INSERT"]
    first, second = UsageRecord.objects.order_by("id")
    assert (first.api_key_id, first.input_tokens, first.cost_usd, first.status_code) == (
        alice.key.id, 3, Decimal("0.000001234"), 200)
    assert (second.api_key_id, second.route, second.status_code, second.output_tokens) == (None, "messages", 429, 0)
    assert first.created is not None and first.created.tzinfo is not None


def test_insert_rows_converts_values_of_other_types_as_the_fields_do(alice):
    from decimal import Decimal

    from studio.models import UsageRecord

    recording.insert_rows(UsageRecord, [
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
            recording.insert_rows(UsageRecord, [
                {"user_id": alice.user.id, "model_id": "omicron-4-mini", "route": "chat", "cost_usd": Decimal("1")},
                {"user_id": alice.user.id, "model_id": "omicron-4-mini", "route": "chat", "cost_usd": bad}])
    assert not UsageRecord.objects.exists()


def test_insert_rows_of_one_named_field_and_of_rows_naming_different_fields(alice):
    from studio.models import UsageRecord

    recording.insert_rows(UsageRecord, [{"model_id": "omicron-4-mini"}, {"model_id": "epsilon-4.5"}])
    recording.insert_rows(UsageRecord, [{"model_id": "a", "input_tokens": 5}, {"route": "chat", "model_id": "b"},
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
        recording.insert_rows(UsageRecord, rows)
        sent = [sql for sql in count_queries["sql"] if sql.startswith("INSERT")]
        assert len(sent) <= 12  # a few statements, not one per row
        inserts += sent
    assert len(set(inserts)) <= 7  # the same few texts each time: they stay prepared
    written = list(UsageRecord.objects.order_by("id").values_list("model_id", "input_tokens"))
    assert written == [(f"m{n}", n) for batch in (300, 37, 300) for n in range(batch)]


def test_insert_rows_with_replace_updates_only_the_named_fields_of_a_taken_key(alice, count_queries):
    from studio.models import UsageRecord

    recording.insert_rows(UsageRecord, [{"id": 7, "model_id": "a", "route": "chat", "input_tokens": 1}])
    count_queries["sql"].clear()
    recording.insert_rows(UsageRecord, [{"id": 7, "model_id": "b", "route": "messages", "input_tokens": 2},
                                        {"id": 8, "model_id": "c", "route": "responses", "input_tokens": 3}],
                          replace=["model_id", "input_tokens"])
    assert [sql.split()[0] for sql in count_queries["sql"]] == ["INSERT"]
    rows = [(r.id, r.model_id, r.route, r.input_tokens) for r in UsageRecord.objects.order_by("id")]
    assert rows == [(7, "b", "chat", 2), (8, "c", "responses", 3)]  # the route of 7 was not named: kept


def test_insert_rows_sends_prepared_columns_as_they_are_in_rows_alike_or_not(alice):
    from studio.models import StoredResponse

    user = alice.user.id
    recording.insert_rows(StoredResponse, [{"id": "r1", "user_id": user, "model_id": "m", "response": '{"n": 1}'},
                                           {"id": "r2", "user_id": user, "model_id": "m", "response": '{"n": 2}'}],
                          prepared=["response"])
    # Rows naming different fields: a prepared value still goes as it is, a missing one gets the default.
    recording.insert_rows(StoredResponse, [{"id": "r3", "user_id": user, "model_id": "m", "response": '{"n": 3}',
                                            "context": '[{"role": "user"}]'},
                                           {"id": "r4", "user_id": user, "model_id": "m", "response": '{"n": 4}'}],
                          prepared=["response", "context"])
    rows = {r.id: (r.response, r.context) for r in StoredResponse.objects.all()}
    assert rows == {"r1": ({"n": 1}, []), "r2": ({"n": 2}, []), "r3": ({"n": 3}, [{"role": "user"}]),
                    "r4": ({"n": 4}, [])}


def test_a_column_goes_as_it_is_only_when_every_value_is_of_its_plain_type():
    from decimal import Decimal

    assert recording._unchanged(["a", None, "b"], str)
    assert not recording._unchanged(["a", 1], str)
    assert not recording._unchanged([1, True], int)  # a bool is converted by an integer field
    assert recording._unchanged([Decimal("0.1"), Decimal("2")], Decimal)
    assert not recording._unchanged([Decimal("0.1"), Decimal("NaN")], Decimal)
    assert not recording._unchanged([Decimal("0.1"), None], Decimal)  # value by value: None is checked alone
    assert not recording._unchanged([Decimal("0.1"), 0.1], Decimal)
    assert not recording._unchanged(["a"], None)
    for values, plain in ((["a", None], str), ([1, True], int), ([Decimal("0.1"), Decimal("NaN"), None], Decimal),
                          ([0.1, 2], float)):  # one value at a time, the same rule
        assert [recording._as_is(v, plain) for v in values] == [recording._unchanged([v], plain) for v in values]


async def test_a_written_record_is_not_held_while_the_recorder_waits(stats):
    """A record (and any media it holds) is let go once written, not kept until the next one comes."""
    import gc
    import weakref

    record = Flaky(failures=0)
    recording.submit(record)
    await recording.drain()
    written = weakref.ref(record)
    del record
    gc.collect()
    assert written() is None


async def wait_until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.005)


async def test_patient_records_coming_one_by_one_share_one_write(transactional_db, settings):
    """Usage rows of /v1 calls arriving a few milliseconds apart go out in one statement, not one
    write (thread hop, transaction, commit) each."""
    settings.STUDIO_RECORDER_LINGER_MS = 60_000
    for i in range(4):
        recording.submit(Batched(str(i)), patient=True)
        await asyncio.sleep(0.01)  # the recorder is awake and waiting between them
    assert written == []
    await recording.drain()
    assert written == [("batch", ("0", "1", "2", "3"))]


async def test_patient_records_are_written_once_the_linger_is_over(transactional_db, settings):
    settings.STUDIO_RECORDER_LINGER_MS = 500
    recording.submit(Batched("alone"), patient=True)
    await asyncio.sleep(0.01)
    assert written == []  # still waiting for company
    await wait_until(lambda: written)  # no drain: the wait ends by itself
    assert written == [("batch", ("alone",))]


async def test_an_impatient_record_ends_the_wait_for_those_before_it(transactional_db, settings):
    """A record something reads back at once (a studio job's, a stored response) is written at
    once, and takes the patient ones waiting with it."""
    settings.STUDIO_RECORDER_LINGER_MS = 60_000
    recording.submit(Plain("patient"), patient=True)
    await asyncio.sleep(0.05)
    assert written == []
    recording.submit(Plain("urgent"))
    await wait_until(lambda: len(written) == 2)
    assert sorted(written) == [("one", "patient"), ("one", "urgent")]


async def test_drain_does_not_wait_out_the_linger(transactional_db, settings):
    settings.STUDIO_RECORDER_LINGER_MS = 60_000
    recording.submit(Plain("patient"), patient=True)
    await asyncio.sleep(0.01)
    await asyncio.wait_for(recording.drain(), 5)
    assert written == [("one", "patient")]


async def test_without_a_linger_a_patient_record_is_written_at_once(transactional_db, settings):
    settings.STUDIO_RECORDER_LINGER_MS = 0
    recording.submit(Plain("patient"), patient=True)
    await wait_until(lambda: written, timeout=2)


async def test_a_text_call_is_patient_and_other_call_records_are_not():
    from studio.gateway.native.record import NativeRecord
    from studio.gateway.text.record import TextRecord

    assert TextRecord.patient and not NativeRecord.patient and not Call.patient


def test_insert_rows_gives_the_rows_of_a_batch_one_time_of_writing_and_their_defaults(alice):
    from studio.models import UsageRecord

    before = timezone.now()
    recording.insert_rows(UsageRecord, [
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

    assert recording._shared_default(UsageRecord._meta.get_field("created"))
    assert recording._shared_default(UsageRecord._meta.get_field("status_code"))
    assert not recording._shared_default(EditSession._meta.get_field("id"))  # a new UUID for each row
    assert not recording._shared_default(PlatformModel._meta.get_field("capabilities"))  # a dict of its own
