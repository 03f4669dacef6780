"""The JSON log format: one object per line with time, level, logger and message, the record's
extra fields, and the traceback of an exception."""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal

import orjson
import pytest

from studio.core.logs import BatchedLineHandler, JsonFormatter, MessageFormatter


@pytest.fixture
def log() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("tests.core.json-logs")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    yield logger, out
    logger.removeHandler(handler)


def lines(out: io.StringIO) -> list[dict]:
    text = out.getvalue()
    assert text.endswith("\n")
    return [orjson.loads(line) for line in text.splitlines()]


def test_a_record_is_one_json_line_with_its_time_level_logger_and_message(log) -> None:
    logger, out = log
    logger.warning("upstream %s answered %d", "ark-main", 503)
    [entry] = lines(out)
    assert entry["level"] == "WARNING"
    assert entry["logger"] == "tests.core.json-logs"
    assert entry["message"] == "upstream ark-main answered 503"
    when = datetime.fromisoformat(entry["time"])
    assert when.utcoffset().total_seconds() == 0 and when.microsecond % 1000 == 0  # UTC, milliseconds
    assert set(entry) == {"time", "level", "logger", "message"}


def test_extra_fields_are_kept_and_values_json_cannot_hold_become_text(log) -> None:
    logger, out = log
    logger.info("done", extra={"upstream": "openai-main", "attempts": 3, "cost": Decimal("0.0125")})
    [entry] = lines(out)
    assert entry["upstream"] == "openai-main" and entry["attempts"] == 3
    assert entry["cost"] == "0.0125"


def test_an_exception_comes_with_its_traceback_on_the_same_line(log) -> None:
    logger, out = log
    try:
        raise ValueError("bad frame\nsecond line")
    except ValueError:
        logger.exception("record lost")
    [entry] = lines(out)  # the traceback's newlines are escaped inside the one line
    assert entry["level"] == "ERROR" and entry["message"] == "record lost"
    assert "Traceback" in entry["exc_info"] and "ValueError: bad frame" in entry["exc_info"]


def test_a_stack_is_included_when_asked_for(log) -> None:
    logger, out = log
    logger.info("here", stack_info=True)
    [entry] = lines(out)
    assert "test_a_stack_is_included_when_asked_for" in entry["stack_info"]


def test_lines_of_several_records_stay_separate(log) -> None:
    logger, out = log
    for n in range(3):
        logger.debug("beat %d", n)
    assert [entry["message"] for entry in lines(out)] == ["beat 0", "beat 1", "beat 2"]


class Writes(io.StringIO):
    """A stream that counts its ``write`` calls."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def write(self, text: str) -> int:
        self.calls += 1
        return super().write(text)


@pytest.fixture
def batched() -> Iterator[tuple[logging.Logger, Writes, BatchedLineHandler]]:
    out = Writes()
    handler = BatchedLineHandler(out, delay=0.05, max_bytes=1000)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("tests.core.batched-lines")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    yield logger, out, handler
    logger.removeHandler(handler)


async def test_lines_logged_in_the_event_loop_are_written_together_a_moment_later(batched) -> None:
    logger, out, _ = batched
    for n in range(5):
        logger.info("line %d", n)
    assert out.getvalue() == ""  # nothing written yet
    await asyncio.sleep(0.15)
    assert out.getvalue().splitlines() == [f"line {n}" for n in range(5)]
    assert out.calls == 1
    logger.info("later")
    await asyncio.sleep(0.15)
    assert out.getvalue().splitlines()[-1] == "later" and out.calls == 2


async def test_a_full_batch_is_written_at_once(batched) -> None:
    logger, out, _ = batched
    for n in range(30):
        logger.info("%s %d", "x" * 40, n)  # 30 lines of 44 bytes: past 1000 bytes at the 23rd
    assert len(out.getvalue().splitlines()) == 23
    await asyncio.sleep(0.15)
    assert len(out.getvalue().splitlines()) == 30


def log_in_a_loop_that_closes(logger: logging.Logger, message: str) -> None:
    """Log ``message`` in an event loop that is closed right after (its write timer never fires)."""

    async def log_in_loop() -> None:
        logger.info(message)

    loop = asyncio.new_event_loop()
    loop.run_until_complete(log_in_loop())
    loop.close()


def test_outside_an_event_loop_a_line_is_written_at_once_after_what_waits(batched) -> None:
    logger, out, handler = batched
    log_in_a_loop_that_closes(logger, "from the loop")
    assert out.getvalue() == ""
    logger.info("from a thread")
    assert out.getvalue().splitlines() == ["from the loop", "from a thread"]


async def test_flush_writes_what_waits(batched) -> None:
    logger, out, handler = batched
    logger.info("at exit")
    handler.flush()  # what logging.shutdown does when the process ends
    assert out.getvalue() == "at exit\n"


@pytest.fixture
def batched_messages(batched) -> tuple[logging.Logger, Writes, BatchedLineHandler]:
    logger, out, handler = batched
    handler.setFormatter(MessageFormatter())
    return logger, out, handler


async def test_a_line_written_straight_joins_the_batch_as_a_record_of_it_would(batched_messages) -> None:
    logger, out, handler = batched_messages
    logger.info("as a record")
    handler.write_line('{"straight": true}')
    logger.info("another record")
    assert out.getvalue() == ""  # kept with the others, written a moment later
    await asyncio.sleep(0.15)
    assert out.getvalue().splitlines() == ["as a record", '{"straight": true}', "another record"]
    assert out.calls == 1


def test_outside_an_event_loop_a_line_written_straight_goes_out_at_once_after_what_waits(batched_messages) -> None:
    logger, out, handler = batched_messages
    log_in_a_loop_that_closes(logger, "from the loop")
    handler.write_line("from a thread")
    assert out.getvalue().splitlines() == ["from the loop", "from a thread"]


def test_the_message_formatter_writes_the_message_as_it_is() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "%s and %d", ("text", 3), None)
    assert MessageFormatter().format(record) == "text and 3"
