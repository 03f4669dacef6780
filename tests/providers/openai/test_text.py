"""The OpenAI text adapter against a fake vendor: headers, paths, pass-through fidelity, error
mapping (buffered and inside a stream) and failover."""

from __future__ import annotations

import contextlib

import orjson
import pytest

from studio.gateway import recording
from tests.providers.fake_text_vendor import FakeVendor, add_upstream, json_answer, sse_answer

pytestmark = pytest.mark.django_db(transaction=True)

BASE = "http://fake-openai.test/v1"
COMPLETION = {"id": "chatcmpl-9", "object": "chat.completion", "created": 1, "model": "gpt-vendor-2024-07-18",
              "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop",
                           "logprobs": None}],
              "usage": {"prompt_tokens": 11, "completion_tokens": 2, "total_tokens": 13}, "vendor_extra": {"a": 1}}


@pytest.fixture
async def vendor(catalog):
    fake = FakeVendor(BASE)
    fake.mount()
    await add_upstream("openai", BASE, {"omicron-4-mini": "gpt-vendor", "epsilon-4.5": "gpt-vendor"})
    yield fake
    fake.unmount()


def auth(account) -> dict[str, str]:
    return {"Authorization": f"Bearer {account.secret}"}


async def test_pass_through_keeps_unknown_fields_and_rewrites_only_model(client, alice, vendor):
    vendor.answer = lambda request: json_answer(COMPLETION)
    sent = {"model": "omicron-4-mini", "messages": [{"role": "user", "content": "x"}], "logit_bias": {"50256": -100},
            "prediction": {"type": "content", "content": "y"}, "some_future_field": [1, 2]}
    response = await client.post("/v1/chat/completions", headers=auth(alice), json=sent)
    assert response.status_code == 200
    request = vendor.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == "Bearer vendor-secret-openai"
    assert request["body"] == {**sent, "model": "gpt-vendor"}
    assert response.json() == {**COMPLETION, "model": "omicron-4-mini"}
    await recording.drain()
    from studio.models import UsageRecord

    record = await UsageRecord.objects.aget(api_key=alice.key)
    assert (record.input_tokens, record.output_tokens, record.total_tokens) == (11, 2, 13)


async def test_usage_requested_upstream_but_hidden_from_the_client(client, alice, vendor):
    def chunk(delta, finish=None, **extra):
        return b"data: " + orjson.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1,
                                         "model": "gpt-vendor", "choices": [{"index": 0, "delta": delta,
                                                                             "finish_reason": finish}],
                                         "usage": None, **extra}) + b"\n\n"
    usage = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    frames = [chunk({"role": "assistant", "content": ""}), chunk({"content": "a b c"}), chunk({}, "stop"),
              b"data: " + orjson.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1,
                                        "model": "gpt-vendor", "choices": [], "usage": usage}) + b"\n\n",
              b"data: [DONE]\n\n"]
    vendor.answer = lambda request: sse_answer(frames)
    response = await client.post("/v1/chat/completions", headers=auth(alice), json={
        "model": "omicron-4-mini", "stream": True, "messages": [{"role": "user", "content": "x"}]})
    assert vendor.requests[0]["body"]["stream_options"] == {"include_usage": True}
    lines = [line for line in response.text.split("\n") if line]
    assert lines[-1] == "data: [DONE]" and len(lines) == 4
    assert "usage" not in response.text
    assert all(orjson.loads(line[6:])["model"] == "omicron-4-mini" for line in lines[:-1])
    await recording.drain()
    from studio.models import UsageRecord

    record = await UsageRecord.objects.aget(api_key=alice.key)
    assert (record.input_tokens, record.output_tokens) == (7, 3)


@pytest.mark.parametrize(
    ("status", "vendor_error", "client_status", "client_type"),
    [
        (400, {"message": "bad temperature", "type": "invalid_request_error", "param": "temperature",
               "code": "invalid_value"}, 400, "invalid_request_error"),
        (429, {"message": "slow down", "type": "requests", "param": None, "code": "rate_limit_exceeded"}, 429,
         "requests"),
        (401, {"message": "Incorrect API key", "type": "invalid_request_error", "param": None,
               "code": "invalid_api_key"}, 502, "server_error"),
        (500, {"message": "boom", "type": "server_error", "param": None, "code": None}, 502, "server_error"),
        (503, {"message": "overloaded", "type": "server_error", "param": None, "code": None}, 503, "server_error"),
    ],
)
async def test_vendor_errors_map_to_typed_errors(client, alice, vendor, status, vendor_error, client_status,
                                                 client_type):
    from studio.gateway import routing

    vendor.answer = lambda request: json_answer({"error": vendor_error}, status)
    # Only the fake vendor serves the model here, so no failover hides the error.
    from studio.models import Upstream

    await Upstream.objects.filter(name="Sandbox").aupdate(enabled=False)
    routing.reset_health()
    response = await client.post("/v1/chat/completions", headers=auth(alice), json={
        "model": "omicron-4-mini", "messages": [{"role": "user", "content": "x"}]})
    assert response.status_code == client_status
    error = response.json()["error"]
    assert error["type"] == client_type and error["message"]
    if status == 400:
        assert error["param"] == "temperature" and error["code"] == "invalid_value"
    messages = await client.post("/v1/messages", headers={"x-api-key": alice.secret, "epsilon-version": "1"}, json={
        "model": "epsilon-4.5", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]})
    assert messages.status_code == client_status and messages.json()["type"] == "error"


async def test_retryable_error_is_the_family_error_not_a_sandbox_answer(client, alice, vendor):
    vendor.answer = lambda request: json_answer({"error": {"message": "down", "type": "server_error"}}, 503)
    response = await client.post("/v1/chat/completions", headers=auth(alice), json={
        "model": "omicron-4-mini", "messages": [{"role": "user", "content": "still here"}]})
    assert response.status_code == 503  # the sandbox never stands in for the vendor
    assert "choices" not in response.json() and response.json()["error"]["message"]
    assert len(vendor.requests) == 1


PARTIAL = (b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-vendor","choices":'
           b'[{"index":0,"delta":{"content":"par"},"finish_reason":null}]}\n\n')
EXPLODED = b'data: {"error":{"message":"exploded","type":"server_error","param":null,"code":null}}\n\n'


@pytest.mark.parametrize("frames", [[PARTIAL, EXPLODED], [PARTIAL + EXPLODED]], ids=["two reads", "one read"])
async def test_error_inside_a_stream_becomes_the_family_error_event(client, alice, vendor, frames):
    vendor.answer = lambda request: sse_answer(frames)
    response = await client.post("/v1/chat/completions", headers=auth(alice), json={
        "model": "omicron-4-mini", "stream": True, "messages": [{"role": "user", "content": "x"}]})
    lines = [line for line in response.text.split("\n") if line]
    assert len(lines) == 2 and orjson.loads(lines[1][6:])["error"]["message"] == "exploded"
    assert orjson.loads(lines[0][6:])["choices"][0]["delta"]["content"] == "par"  # what came first is kept


async def test_a_stream_ends_at_its_end_marker_even_mid_read(client, alice, vendor):
    vendor.answer = lambda request: sse_answer([PARTIAL + b"data: [DONE]\n\n" + PARTIAL])
    response = await client.post("/v1/chat/completions", headers=auth(alice), json={
        "model": "omicron-4-mini", "stream": True, "messages": [{"role": "user", "content": "x"}]})
    lines = [line for line in response.text.split("\n") if line]
    assert lines[0].startswith("data: {") and lines[1:] == ["data: [DONE]"]


async def test_responses_pass_through_to_the_vendor_responses_path(client, alice, vendor):
    answer = {"id": "resp_1", "object": "response", "status": "completed", "model": "gpt-vendor",
              "output": [], "usage": {"input_tokens": 4, "output_tokens": 1, "total_tokens": 5}}
    vendor.answer = lambda request: json_answer(answer)
    response = await client.post("/v1/responses", headers=auth(alice), json={
        "model": "omicron-4-mini", "input": "x", "store": False, "include": ["reasoning.encrypted_content"]})
    assert vendor.requests[0]["path"] == "/v1/responses"
    assert vendor.requests[0]["body"]["include"] == ["reasoning.encrypted_content"]
    assert response.json() == {**answer, "model": "omicron-4-mini"}


async def test_messages_client_translated_onto_openai_vendor(client, alice, vendor):
    vendor.answer = lambda request: json_answer(COMPLETION)
    response = await client.post("/v1/messages", headers={"x-api-key": alice.secret, "epsilon-version": "1"}, json={
        "model": "epsilon-4.5", "max_tokens": 9, "system": "sys", "stop_sequences": ["END"],
        "messages": [{"role": "user", "content": "hey"}]})
    assert vendor.requests[0]["body"] == {"model": "gpt-vendor", "max_tokens": 9, "stop": ["END"], "messages": [
        {"role": "system", "content": "sys"}, {"role": "user", "content": "hey"}]}
    body = response.json()
    assert body["content"] == [{"type": "text", "text": "hi"}] and body["model"] == "epsilon-4.5"
    assert body["usage"]["input_tokens"] == 11 and body["usage"]["output_tokens"] == 2


@pytest.mark.parametrize(("reads", "expected"), [
    ([b"data: 1\n\ndata: 2\n\n", b"data: 3\n\ndata: [DONE]\n\n"], [[b"1", b"2"], [b"3"]]),
    ([b"data: 1\n\ndata: [DONE]\n\ndata: 2\n\n"], [[b"1"]]),  # nothing after the end marker
    ([b"data: 1\n\n", b"data: [DONE]\n\n"], [[b"1"]]),
    ([b"data: 1\n\ndata: x[DONE]\n\n", b"data: [DONE]\n\n"], [[b"1", b"x[DONE]"]]),
    ([b"data: 1\n\ndata: 2\n\n"], [[b"1", b"2"]]),  # ended without the marker
])
async def test_a_stream_read_by_read_ends_at_its_end_marker_with_each_reads_bytes(reads, expected):
    from studio.providers.openai.provider import OpenAIProvider
    from tests.providers.video_fakes import upstream

    fake = FakeVendor("http://reads-openai.test/v1", answer=lambda request: sse_answer(reads))
    fake.mount()
    try:
        got = [read async for read in OpenAIProvider(upstream("openai", fake.base_url, "k")).text_stream("chat", b"{}")]
    finally:
        fake.unmount()
    assert [[event.data for event in read] for read in got] == expected
    # Each read passed on carries its own bytes: its events' lone data lines, as the vendor sent them.
    assert [read.raw for read in got] == [b"".join(b"data: " + data + b"\n\n" for data in read) for read in expected]


async def test_an_error_event_in_a_read_ends_the_stream_after_the_events_before_it():
    from studio.core.errors import UpstreamError
    from studio.providers.openai.provider import OpenAIProvider
    from tests.providers.video_fakes import upstream

    error = b'data: {"error":{"message":"overloaded","type":"server_error"}}\n\n'
    fake = FakeVendor("http://reads-openai.test/v1", answer=lambda request: sse_answer([b"data: 1\n\n" + error]))
    fake.mount()
    got = []
    try:
        with pytest.raises(UpstreamError) as exc:  # the vendor's server error, as the gateway's 502
            async for read in OpenAIProvider(upstream("openai", fake.base_url, "k")).text_stream("chat", b"{}"):
                got.append([event.data for event in read])
    finally:
        fake.unmount()
    assert got == [[b"1"]] and exc.value.status == 502 and "overloaded" in str(exc.value)


def named(name: bytes, data: bytes) -> bytes:
    return b"event: " + name + b"\ndata: " + data + b"\n\n"


DELTA = named(b"response.output_text.delta", b'{"type":"response.output_text.delta","delta":"hi"}')
FAILED = named(b"response.failed", b'{"type":"response.failed","response":{"error":{"code":"server_error",'
                                   b'"message":"overloaded"}}}')


@pytest.mark.parametrize(("reads", "passed", "fails"), [
    ([DELTA + DELTA, DELTA], [[DELTA + DELTA], [DELTA]], False),  # nothing that ends it: each read as it came
    ([DELTA, DELTA + FAILED + DELTA], [[DELTA], [DELTA]], True),  # a failed response, mid-read
    ([DELTA + named(b"error", b'{"error":{"type":"server_error","message":"overloaded"}}')], [[DELTA]], True),
    ([DELTA + named(b"response.output_text.delta", b'{"error":{"type":"server_error","message":"x"}}')],
     [[DELTA]], True),  # an error body under another name
    ([DELTA + b"data: [DONE]\n\n" + DELTA], [[DELTA]], False),  # the end marker
    ([DELTA + named(b"response.output_text.delta", b'{"delta":"data: [DONE]"}')],  # the marker's text in a delta
     [[DELTA + named(b"response.output_text.delta", b'{"delta":"data: [DONE]"}')]], False),
])
async def test_a_read_of_named_events_goes_on_whole_unless_one_of_them_ends_the_stream(reads, passed, fails):
    from studio.core.errors import UpstreamError
    from studio.providers.openai.provider import OpenAIProvider
    from tests.providers.video_fakes import upstream

    fake = FakeVendor("http://reads-openai.test/v1", answer=lambda request: sse_answer(reads))
    fake.mount()
    got = []
    try:
        with contextlib.nullcontext() if not fails else pytest.raises(UpstreamError):
            async for read in OpenAIProvider(upstream("openai", fake.base_url, "k")).text_stream("responses", b"{}"):
                got.append([read.framed])
    finally:
        fake.unmount()
    assert got == passed
