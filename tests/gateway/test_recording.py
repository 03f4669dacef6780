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

from studio.core.errors import UpstreamError
from studio.gateway import recording

pytestmark = pytest.mark.django_db(transaction=True)

written: list[tuple[str, object]] = []


@dataclass
class Plain(recording.Record):
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
class Heavy(recording.Record):
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
class Flaky(recording.Record):
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
    """A record something reads back at once (a studio job's) is written at once, and takes the
    patient ones waiting with it."""
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


def _usage_and_response(alice, response_kind=None):
    from studio.core.principal import Principal
    from studio.gateway.text.record import TextRecord
    from studio.gateway.text.stored import ResponseRecord

    principal = Principal(user_id=alice.user.id, key_id=alice.key.id)
    usage = TextRecord(principal, "omicron-4-mini", "responses", True, input_tokens=3, output_tokens=5)
    kind = response_kind or ResponseRecord
    return usage, kind(principal, "omicron-4-mini", {"id": "resp_1", "object": "response", "output": []}, [])


def test_a_batch_of_several_kinds_is_written_in_one_transaction(alice, monkeypatch):
    from django.db import connections

    from studio.models import StoredResponse, UsageRecord

    commits: list[str] = []
    commit = type(connections["default"]).commit
    monkeypatch.setattr(type(connections["default"]), "commit", lambda self: (commits.append(self.alias), commit(self))[1])
    assert recording._persist_batch(list(_usage_and_response(alice))) == []
    assert commits == ["default"]  # a responses call's usage and its stored response: one commit, not two
    assert UsageRecord.objects.filter(route="responses", output_tokens=5).count() == 1
    assert StoredResponse.objects.filter(id="resp_1").exists()


def test_when_one_kind_of_a_batch_fails_the_others_are_written_once(alice, caplog):
    from studio.gateway.text.stored import ResponseRecord
    from studio.models import StoredResponse, UsageRecord

    class Refused(ResponseRecord):
        @classmethod
        def persist_batch(cls, records) -> None:
            ResponseRecord.persist_batch.__func__(cls, records)  # its row is in the transaction, then undone
            raise RuntimeError("refused")

    usage, refused = _usage_and_response(alice, Refused)
    with caplog.at_level(logging.ERROR, logger="studio.gateway.recording"):
        assert recording._persist_batch([usage, refused]) == [refused]  # tried again later, alone
    assert UsageRecord.objects.filter(route="responses").count() == 1  # written once: the undone try left none
    assert not StoredResponse.objects.exists()
    assert "retrying kind by kind" in caplog.text
