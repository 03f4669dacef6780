"""The JSON log format: one object per line with time, level, logger and message, the record's
extra fields, and the traceback of an exception."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal

import orjson
import pytest

from studio.core.logs import JsonFormatter


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
