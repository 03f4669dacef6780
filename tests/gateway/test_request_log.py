"""The request log line: one JSON object per /v1 request with who, what, how long and how much;
never a key; the prompt only when given (and of any family's body, without media)."""

from __future__ import annotations

import io
import json
import logging
import threading
import time
from decimal import Decimal

import orjson
import pytest

from studio.core.logs import BatchedLineHandler, MessageFormatter
from studio.core.principal import Principal
from studio.gateway.cost import Usage, display
from studio.gateway.request_log import PROMPT_LIMIT, _record, emit, entry, prompt_of

PRINCIPAL = Principal(user_id=7, key_id=3, key_prefix="sk-studio-ab12")


@pytest.fixture
def request_lines():
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep()
    logger = logging.getLogger("studio.requests")
    logger.addHandler(handler)
    yield records
    logger.removeHandler(handler)


def line(**fields) -> dict:
    values = dict(request_id="req-1", method="POST", path="/v1/chat/completions", family="chat", status=200,
                  latency_ms=123.456, first_byte_ms=45.67)
    values.update(fields)
    return entry(**values)


def test_a_full_line_names_who_what_how_long_and_how_much() -> None:
    usage = Usage(input_tokens=12, output_tokens=30, images=[("1024x1024", "high"), ("1024x1024", "high")])
    fields = line(principal=PRINCIPAL, model="omicron-4-mini", upstream="openai-main", usage=usage,
                  cost=display(Decimal("0.001250")))
    assert fields == {
        "request_id": "req-1", "method": "POST", "path": "/v1/chat/completions", "family": "chat",
        "key_prefix": "sk-studio-ab12", "user_id": 7, "model": "omicron-4-mini", "upstream": "openai-main",
        "status": 200, "latency_ms": 123.5, "first_byte_ms": 45.7, "input_tokens": 12, "output_tokens": 30,
        "images": 2, "cost_usd": "0.00125",
    }


def test_a_refused_request_has_nulls_and_zeros_where_nothing_is_known() -> None:
    fields = line(status=401, family="")
    assert fields["key_prefix"] is None and fields["user_id"] is None
    assert fields["model"] is None and fields["upstream"] is None and fields["cost_usd"] is None
    assert (fields["input_tokens"], fields["output_tokens"], fields["images"]) == (0, 0, 0)
    assert "prompt" not in fields


def test_a_free_call_costs_zero_not_null() -> None:
    assert line(principal=PRINCIPAL, cost=display(Decimal("0")))["cost_usd"] == "0"


def test_the_prompt_is_in_the_line_only_when_given() -> None:
    assert line(prompt="a red fox")["prompt"] == "a red fox"


def test_emit_logs_the_line_as_one_json_object(request_lines) -> None:
    emit(line(principal=PRINCIPAL, model="omicron-4-mini"))
    [record] = request_lines
    assert record.levelno == logging.INFO and record.name == "studio.requests"
    message = record.getMessage()
    assert "\n" not in message
    entry = json.loads(message)
    assert entry["request_id"] == "req-1" and entry["key_prefix"] == "sk-studio-ab12"
    assert "key" not in entry and "secret" not in message


def test_a_lines_record_formats_like_any_other_record_of_its_time(request_lines) -> None:
    # A formatter of a deployment's own (plain text, with time, level, file and thread) gets
    # every attribute a record made by the logger would carry.
    before = time.time()
    emit(line())
    [record] = request_lines
    made = logging.getLogger("studio.requests").makeRecord("studio.requests", logging.INFO, record.pathname, 0,
                                                            record.msg, None, None)
    timed = ("created", "msecs", "relativeCreated", "message")  # (message: set by a handler's formatting)
    assert {k: v for k, v in vars(record).items() if k not in timed} == \
        {k: v for k, v in vars(made).items() if k not in timed}
    assert before <= record.created <= made.created
    assert abs((made.created - record.created) * 1000 - (made.relativeCreated - record.relativeCreated)) < 1
    text = logging.Formatter("%(asctime)s %(levelname)s %(filename)s %(threadName)s %(message)s").format(record)
    assert text.split(" ")[2:5] == ["INFO", "request_log.py", threading.current_thread().name]


def test_a_record_factory_of_a_deployments_own_is_used(request_lines) -> None:
    default = logging.getLogRecordFactory()

    def tagged(*args, **kwargs) -> logging.LogRecord:
        record = default(*args, **kwargs)
        record.deployment = "eu-1"
        return record

    logging.setLogRecordFactory(tagged)
    try:
        emit(line())
    finally:
        logging.setLogRecordFactory(default)
    [record] = request_lines
    assert record.deployment == "eu-1"


def test_nothing_is_written_when_the_logger_is_off(request_lines) -> None:
    logger = logging.getLogger("studio.requests")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        emit(line())
    finally:
        logger.setLevel(level)
    assert request_lines == []


@pytest.mark.parametrize(("body", "prompt"), [
    ({"prompt": "a lighthouse at dusk", "size": "1024x1024"}, "a lighthouse at dusk"),  # images, video C
    ({"model": "m", "messages": [{"role": "user", "content": "first"}, {"role": "user", "content": "last"}]},
     "last"),  # chat
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": "what is this"},
                                                {"type": "image", "source": {"data": "iVBOR..."}}]}]},
     "what is this"),  # messages, with an image left out
    ({"input": "tell me a joke"}, "tell me a joke"),  # responses, as a string
    ({"input": [{"role": "user", "content": [{"type": "input_text", "text": "earlier"}]},
                {"role": "user", "content": [{"type": "input_text", "text": "now"}]}]}, "now"),  # responses, items
    ({"contents": [{"role": "user", "parts": [{"text": "a cat"}, {"inlineData": {"data": "AAAA"}}]}]},
     "a cat"),  # native
    ({"content": [{"type": "text", "text": "waves at night"}, {"type": "image_url", "image_url": {"url": "x"}}]},
     "waves at night"),  # video protocol A
])
def test_the_prompt_of_each_family(body: dict, prompt: str) -> None:
    assert prompt_of(orjson.dumps(body)) == prompt


@pytest.mark.parametrize("raw", [b"not json", b"[1, 2]", b'{"model": "m"}', b'{"messages": []}',
                                 b'{"contents": [{"parts": [{"inlineData": {"data": "AAAA"}}]}]}'])
def test_no_prompt_where_there_is_none(raw: bytes) -> None:
    assert prompt_of(raw) is None


def test_a_long_prompt_is_cut() -> None:
    assert prompt_of(orjson.dumps({"prompt": "x" * (PROMPT_LIMIT + 500)})) == "x" * PROMPT_LIMIT


async def test_with_the_settings_set_up_a_line_goes_straight_to_the_handler_as_logging_would_write_it() -> None:
    logger = logging.getLogger("studio.requests")
    # The settings' own handler: batched, writing messages as they are (pytest adds its own next to it).
    [handler] = [h for h in logger.handlers if isinstance(h, BatchedLineHandler)]
    assert isinstance(handler.formatter, MessageFormatter)
    out = io.StringIO()
    stream = handler.setStream(out)
    handlers, logger.handlers = logger.handlers, [handler]
    made: list[logging.LogRecord] = []
    try:
        handler.emit = made.append  # a record reaching the handler would land here, not in ``out``
        emit(line(principal=PRINCIPAL, model="omicron-4-mini", usage=Usage(input_tokens=3)))
        del handler.emit
        assert made == []  # no record was made and formatted for it
        handler.flush()
        straight = out.getvalue()
        # The same line through logging's own path: the record ``emit`` makes, formatted and kept.
        logger.handle(_record(orjson.dumps(line(principal=PRINCIPAL, model="omicron-4-mini",
                                                     usage=Usage(input_tokens=3))).decode()))
        handler.flush()
    finally:
        handler.setStream(stream)
        logger.handlers = handlers
    first, second = out.getvalue().splitlines()
    assert straight == first + "\n" and first == second
    assert json.loads(first)["key_prefix"] == "sk-studio-ab12"

