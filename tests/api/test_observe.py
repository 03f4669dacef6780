"""Every /v1 answer carries a request id (the client's when sane), which reaches the upstream; it
is counted in the metrics and logged as one JSON line, each switchable off."""

from __future__ import annotations

import asyncio
import json
import logging
from decimal import Decimal

import pytest
from prometheus_client import REGISTRY

from studio.gateway import recording
from tests.providers.fake_text_vendor import FakeVendor, add_upstream, json_answer, sse_answer

pytestmark = pytest.mark.django_db(transaction=True)
VENDOR = "https://vendor-observe.test"
MODEL = "omicron-4-mini"
PROMPT = "a secret recipe for pancakes"
COMPLETION = {
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "vendor-model",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
}


def chunk(obj: dict) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


STREAM = [
    chunk({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
           "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hel"}, "finish_reason": None}]}),
    chunk({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
           "choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]}),
    chunk({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [],
           "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}),
    b"data: [DONE]\n\n",
]


@pytest.fixture
async def vendor():
    fake = FakeVendor(VENDOR, answer=lambda request: sse_answer(STREAM) if request["body"].get("stream")
                      else json_answer(COMPLETION))
    fake.mount()
    upstream = await add_upstream("openai", VENDOR, {MODEL: "vendor-model"})
    yield fake, upstream
    fake.unmount()


@pytest.fixture
def request_lines():
    lines: list[dict] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(json.loads(record.getMessage()))

    handler = Keep()
    logger = logging.getLogger("studio.requests")
    logger.addHandler(handler)
    yield lines
    logger.removeHandler(handler)


def chat(client, secret: str, *, stream: bool = False, headers: dict | None = None):
    body = {"model": MODEL, "messages": [{"role": "user", "content": PROMPT}], "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    return client.post("/v1/chat/completions", json=body,
                       headers={"Authorization": f"Bearer {secret}", **(headers or {})})


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_a_sane_client_request_id_is_kept_answered_and_sent_to_the_upstream(client, alice, vendor):
    fake, _ = vendor
    response = await chat(client, alice.secret, headers={"X-Request-Id": "trace-42.a:b_c"})
    assert response.status_code == 200
    assert response.headers["x-request-id"] == "trace-42.a:b_c"
    assert fake.requests[-1]["headers"]["x-request-id"] == "trace-42.a:b_c"


@pytest.mark.parametrize("incoming", [None, "has space", "x" * 200, "line\nbreak", ""])
async def test_a_missing_or_unsafe_request_id_is_replaced_by_a_new_one(client, alice, vendor, incoming):
    fake, _ = vendor
    headers = {"X-Request-Id": incoming} if incoming is not None and "\n" not in incoming else {}
    response = await chat(client, alice.secret, headers=headers)
    rid = response.headers["x-request-id"]
    assert rid and rid != incoming and len(rid) == 32
    assert fake.requests[-1]["headers"]["x-request-id"] == rid


async def test_an_error_answer_has_a_request_id_too(client):
    response = await client.post("/v1/chat/completions", json={"model": MODEL}, headers={"Authorization": "Bearer nope"})
    assert response.status_code == 401
    assert len(response.headers["x-request-id"]) == 32


async def test_one_json_line_per_request_names_who_what_and_how_long_without_secrets(
        client, alice, vendor, request_lines):
    response = await chat(client, alice.secret, headers={"X-Request-Id": "req-1"})
    assert response.status_code == 200
    assert len(request_lines) == 1
    line = request_lines[0]
    assert line["request_id"] == "req-1"
    assert line["family"] == "openai" and line["path"] == "/v1/chat/completions" and line["status"] == 200
    assert line["model"] == MODEL and line["upstream"] == f"fake openai {VENDOR}"
    assert line["user_id"] == alice.user.id and line["key_prefix"] == alice.key.prefix
    assert line["input_tokens"] == 7 and line["output_tokens"] == 3
    assert line["latency_ms"] > 0 and line["cost_usd"] == response.headers["x-studio-cost-usd"]
    text = json.dumps(line)
    assert alice.secret not in text and "vendor-secret" not in text and PROMPT not in text
    assert "prompt" not in line


async def test_a_stream_is_logged_when_it_ends_with_its_usage_and_first_byte(client, alice, vendor, request_lines):
    response = await chat(client, alice.secret, stream=True)
    assert response.status_code == 200 and "[DONE]" in response.text
    assert len(request_lines) == 1
    line = request_lines[0]
    assert line["status"] == 200 and line["input_tokens"] == 5 and line["output_tokens"] == 2
    assert 0 < line["first_byte_ms"] <= line["latency_ms"]


@pytest.mark.usefixtures("client")  # the application is set up (its logging too) before the log is watched
async def test_a_stream_the_client_leaves_is_logged_as_499_with_what_it_was_charged(alice, vendor, request_lines):
    """A client that stops reading after the first part: the line says 499, with the usage and
    cost the call was charged for what it was sent, the same as its usage record."""
    from studio.asgi import application
    from studio.models import UsageRecord

    body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": PROMPT}], "stream": True,
                       "stream_options": {"include_usage": True}}).encode()
    scope = {"type": "http", "method": "POST", "path": "/v1/chat/completions", "raw_path": b"/v1/chat/completions",
             "query_string": b"", "root_path": "", "client": ("127.0.0.1", 5000), "server": ("testserver", 80),
             "asgi": {"version": "3.0"}, "headers": [(b"content-type", b"application/json"),
                                                     (b"authorization", f"Bearer {alice.secret}".encode())]}
    first_part, asked = asyncio.Event(), []

    async def receive() -> dict:
        if not asked:
            asked.append(True)
            return {"type": "http.request", "body": body}
        await first_part.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        if message["type"] == "http.response.body" and message.get("body"):
            first_part.set()
            await asyncio.Event().wait()  # the client reads nothing more

    await asyncio.wait_for(application(scope, receive, send), timeout=10)
    assert len(request_lines) == 1
    line = request_lines[0]
    await recording.drain()
    row = await UsageRecord.objects.aget(api_key_id=alice.key.id)
    assert line["status"] == row.status_code == 499
    assert line["input_tokens"] == row.input_tokens > 0 and line["output_tokens"] == row.output_tokens > 0
    assert Decimal(line["cost_usd"]) == row.cost_usd > 0


async def test_prompts_are_logged_only_when_asked_for(client, alice, vendor, request_lines, settings):
    settings.STUDIO_LOG_PROMPTS = True
    await chat(client, alice.secret)
    assert request_lines[-1]["prompt"] == PROMPT


async def test_the_request_log_can_be_turned_off(client, alice, vendor, request_lines, settings):
    settings.STUDIO_REQUEST_LOG = False
    response = await chat(client, alice.secret)
    assert response.status_code == 200 and request_lines == []


async def test_requests_tokens_and_latency_are_counted_by_family_model_upstream_and_status(client, alice, vendor):
    _, upstream = vendor
    labels = {"family": "openai", "model": MODEL, "upstream": upstream.name}
    before = (sample("studio_requests_total", **labels, status="200"),
              sample("studio_request_duration_seconds_count", **labels),
              sample("studio_time_to_first_byte_seconds_count", **labels),
              sample("studio_tokens_total", model=MODEL, kind="input"),
              sample("studio_tokens_total", model=MODEL, kind="output"))
    await chat(client, alice.secret)
    await chat(client, alice.secret, stream=True)
    after = (sample("studio_requests_total", **labels, status="200"),
             sample("studio_request_duration_seconds_count", **labels),
             sample("studio_time_to_first_byte_seconds_count", **labels),
             sample("studio_tokens_total", model=MODEL, kind="input"),
             sample("studio_tokens_total", model=MODEL, kind="output"))
    assert [a - b for a, b in zip(after, before, strict=True)] == [2, 2, 2, 7 + 5, 3 + 2]


async def test_refused_requests_are_counted_with_their_status(client):
    before = sample("studio_requests_total", family="openai", model="", upstream="", status="401")
    await client.post("/v1/chat/completions", json={"model": MODEL}, headers={"Authorization": "Bearer nope"})
    assert sample("studio_requests_total", family="openai", model="", upstream="", status="401") == before + 1


async def test_metrics_can_be_turned_off(client, alice, vendor, settings):
    _, upstream = vendor
    settings.STUDIO_METRICS = False
    labels = {"family": "openai", "model": MODEL, "upstream": upstream.name, "status": "200"}
    before = sample("studio_requests_total", **labels)
    response = await chat(client, alice.secret)
    assert response.status_code == 200 and response.headers["x-request-id"]
    assert sample("studio_requests_total", **labels) == before


async def test_an_upstream_failure_its_retry_and_the_failover_are_counted(client, alice, vendor):
    from tests.providers.fake_text_vendor import Answer

    down = FakeVendor("https://vendor-down.test", answer=lambda request: Answer(
        status=503, body=b'{"error": {"message": "overloaded", "type": "server_error"}}'))
    down.mount()
    try:
        failing = await add_upstream("openai", "https://vendor-down.test", {MODEL: "vendor-model"}, priority=20)
        _, answering = vendor

        def errors() -> float:
            return sum(s.value for m in REGISTRY.collect() if m.name == "studio_upstream_errors"
                       for s in m.samples if s.name.endswith("_total") and s.labels["upstream"] == failing.name)

        before = (errors(), sample("studio_upstream_retries_total", upstream=failing.name),
                  sample("studio_upstream_failovers_total", upstream=answering.name))
        response = await chat(client, alice.secret)
        assert response.status_code == 200 and down.requests
        after = (errors(), sample("studio_upstream_retries_total", upstream=failing.name),
                 sample("studio_upstream_failovers_total", upstream=answering.name))
        assert [a - b for a, b in zip(after, before, strict=True)] == [1, 1, 1]
    finally:
        down.unmount()


@pytest.mark.parametrize(("model", "stream"), [("delta-3.1-flash-image", False), ("delta-3-pro-image", True)])
async def test_a_native_image_is_logged_and_counted_as_an_image_made(client, alice, request_lines, model, stream):
    """Native images are billed as tokens, yet each one made is still an image in the log and the
    metrics; a model's interim (thought) images are not counted."""
    before = sample("studio_images_total", model=model)
    body = {"contents": [{"role": "user", "parts": [{"text": "a lighthouse at dusk"}]}]}
    method = "streamGenerateContent" if stream else "generateContent"
    response = await client.post(f"/v1/models/{model}:{method}", json=body,
                                 headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 200
    if stream:
        assert '"thought":true' in response.text.replace(" ", "")  # the model showed interim images too
    line = request_lines[-1]
    assert (line["family"], line["model"], line["images"]) == ("native", model, 1)
    assert line["output_tokens"] > 0
    assert sample("studio_images_total", model=model) == before + 1
