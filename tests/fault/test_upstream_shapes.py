"""Every field of a vendor's valid answer (or of one event of its stream), in turn, of the wrong
JSON type or left out: the client gets a 2xx, the family's upstream error (502) or, once its stream
has begun, the family's error event; never a 500 or a stream cut off."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from tests.fault import tally
from tests.fault.conftest import is_family_error
from tests.fault.vendor import Events
from tests.wrong_values import PNG, variants

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.fault]

MODEL = "omicron-4-mini"

CHAT = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "vendor-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]},
            "finish_reason": "tool_calls", "logprobs": None}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4,
                  "prompt_tokens_details": {"cached_tokens": 1},
                  "completion_tokens_details": {"reasoning_tokens": 0}}}
RESPONSES = {"id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": "vendor-model",
             "output": [{"type": "message", "id": "m1", "status": "completed", "role": "assistant",
                         "content": [{"type": "output_text", "text": "hi", "annotations": []}]},
                        {"type": "function_call", "id": "fc1", "call_id": "c1", "name": "f",
                         "arguments": "{\"a\": 1}", "status": "completed"}],
             "usage": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4,
                       "input_tokens_details": {"cached_tokens": 1}, "output_tokens_details": {"reasoning_tokens": 0}}}
MESSAGE = {"id": "msg_1", "type": "message", "role": "assistant", "model": "vendor-model",
           "content": [{"type": "text", "text": "hi"}, {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}}],
           "stop_reason": "tool_use", "stop_sequence": None,
           "usage": {"input_tokens": 3, "output_tokens": 1, "cache_read_input_tokens": 1}}


def valid_answer(path: str) -> dict[str, Any]:
    if path.endswith("/chat/completions"):
        return CHAT
    if path.endswith("/responses"):
        return RESPONSES
    return MESSAGE


CLIENTS = {
    "/v1/chat/completions": ("openai", {"model": MODEL, "messages": [{"role": "user", "content": "hi"}],
                                        "tools": [{"type": "function", "function": {"name": "f"}}]}),
    "/v1/messages": ("messages", {"model": MODEL, "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}],
                                  "tools": [{"name": "f", "input_schema": {"type": "object"}}]}),
    "/v1/responses": ("openai", {"model": MODEL, "input": "hi",
                                 "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}]}),
}
PROTOCOLS = {"openai": "/v1", "anthropic": "/v1"}

_CHUNK = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "vendor-model"}
CHAT_EVENTS = [
    (None, {**_CHUNK, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"}, "finish_reason": None}]}),
    (None, {**_CHUNK, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                                                                        "function": {"name": "f", "arguments": "{}"}}]},
                                   "finish_reason": None}]}),
    (None, {**_CHUNK, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    (None, {**_CHUNK, "choices": [], "usage": CHAT["usage"]}),
    (None, b"[DONE]"),
]
MESSAGE_EVENTS = [
    ("message_start", {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "vendor-model", "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 1}}}),
    ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {
        "type": "tool_use", "id": "t1", "name": "f", "input": {}}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {
        "type": "input_json_delta", "partial_json": "{\"a\": 1}"}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 1}),
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                       "usage": {"output_tokens": 2}}),
    ("message_stop", {"type": "message_stop"}),
]
_ITEM = RESPONSES["output"][0]
RESPONSE_EVENTS = [
    ("response.created", {"type": "response.created", "sequence_number": 0, "response": {
        **RESPONSES, "status": "in_progress", "output": [], "usage": None}}),
    ("response.output_item.added", {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
                                    "item": {**_ITEM, "status": "in_progress", "content": []}}),
    ("response.output_text.delta", {"type": "response.output_text.delta", "sequence_number": 2, "item_id": "m1",
                                    "output_index": 0, "content_index": 0, "delta": "hi"}),
    ("response.output_item.done", {"type": "response.output_item.done", "sequence_number": 3, "output_index": 0,
                                   "item": _ITEM}),
    ("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta",
                                                "sequence_number": 4, "item_id": "fc1", "output_index": 1,
                                                "delta": "{\"a\": 1}"}),
    ("response.completed", {"type": "response.completed", "sequence_number": 5, "response": RESPONSES}),
]


def valid_events(path: str) -> list[tuple[str | None, object]]:
    if path.endswith("/chat/completions"):
        return CHAT_EVENTS
    if path.endswith("/responses"):
        return RESPONSE_EVENTS
    return MESSAGE_EVENTS


def event_variants(events: list[tuple[str | None, object]]):
    """Each event's variants (``variants``), the other events as they are, and whether the
    changed event is the last of the stream's JSON events."""
    last = max(i for i, (_, data) in enumerate(events) if isinstance(data, dict))
    for i, (name, data) in enumerate(events):
        if not isinstance(data, dict):
            continue
        for change, variant in variants(copy.deepcopy(data), depth=4):
            yield (f"event {i} ({name or 'data'}): {change}", Events([*events[:i], (name, variant), *events[i + 1:]]),
                   i == last)


# The last events of a stream that ended (the messages stream's, a response's, completed or failed).
ENDINGS = ("message_stop", "response.completed", "response.failed", "response.incomplete", "error")


def _finished(data: dict[str, Any]) -> bool:
    """Whether ``data`` is a native stream's last chunk (a candidate with its finish reason)."""
    candidates = data.get("candidates")
    return isinstance(candidates, list) and any(isinstance(c, dict) and c.get("finishReason") for c in candidates)


def stream_verdict(family: str, status: int, text: str, *, ending_changed: bool = False) -> str:
    """Why a streamed answer is wrong ("" if it is right): a 502 before the stream, or a stream
    that ends with its terminator or the family's error event (or, where the vendor's own last
    event was the one changed, however it ends, relayed as the vendor sent it)."""
    if status != 200:
        return "" if status == 502 else f"{status}: {text[:200]}"
    frames = [line[6:] for line in text.split("\n") if line.startswith("data: ")]
    if not frames:
        return "an empty stream"
    if ending_changed:
        return ""
    last = frames[-1]
    if last == "[DONE]":
        return ""
    try:
        data = orjson.loads(last)
    except orjson.JSONDecodeError:
        return f"a stream ending in {last[:100]!r}"
    if is_family_error(family, data) or data.get("type") in ENDINGS or _finished(data):
        return ""
    return f"a stream cut off after {last[:160]}"


HEADERS = {"epsilon-version": "2023-06-01", "anthropic-version": "2023-06-01"}


def _headers(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}", "x-api-key": secret, "x-delta-api-key": secret, **HEADERS}


async def _sweep(client, route: str, body: dict[str, Any], family: str, headers: dict[str, str],
                 current: list[object], changed, *, streamed: bool) -> tuple[list[str], int]:
    """Send ``body`` once for each changed answer (``current`` is what the vendor answers): what
    went wrong with each, and how many calls were made."""
    failures = []
    sent = 0
    for change, variant, ending_changed in changed:
        sent += 1
        current[:] = [variant]
        tally.add("requests tried")
        try:
            response = await client.post(route, json=body, headers=headers)
        except Exception as exc:  # the application raised: the answer was cut off
            tally.add("vendor answers gone wrong")
            failures.append(f"{change}: {type(exc).__name__}: {exc}")
            continue
        status = response.status_code
        if streamed:
            why = stream_verdict(family, status, response.text, ending_changed=ending_changed)
        elif status >= 500 and status != 502:
            why = f"{status} {response.text[:300]}"
        elif status >= 400 and not is_family_error(family, response.json()):
            why = f"{status} without the family's error body: {response.text[:200]}"
        else:
            if status == 200:
                orjson.loads(response.content)
            why = ""
        if why:
            tally.add("vendor answers gone wrong")
            failures.append(f"{change}: {why}")
    return failures, sent


async def _records() -> int:
    """Usage rows written so far (every call writes one, failed or not)."""
    from studio.gateway import recording
    from studio.models import UsageRecord

    await recording.drain()
    return await UsageRecord.objects.acount()


def _answers(valid: object):
    """(what changed, the answer, whether a stream's last event changed) for each variant of ``valid``."""
    if isinstance(valid, Events):
        return event_variants(valid.events)
    return ((change, variant, False) for change, variant in variants(copy.deepcopy(valid)))


@pytest.mark.parametrize("streamed", [False, True], ids=["buffered", "streamed"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("route", CLIENTS)
async def test_a_text_answer_of_the_wrong_shape_is_a_502_or_the_streams_error_event(client, alice, faulty_upstream,
                                                                                    route, protocol, streamed):
    family, body = CLIENTS[route]
    body = {**body, "stream": True} if streamed else body
    current: list[object] = []

    def valid(path: str) -> object:
        return Events(valid_events(path)) if streamed else valid_answer(path)

    vendor, _ = faulty_upstream(protocol, PROTOCOLS[protocol], {MODEL: "vendor-model"},
                                lambda method, path, request: (200, current[0] if current else valid(path)))
    headers = _headers(alice.secret)
    first = await client.post(route, json=body, headers=headers)
    assert first.status_code == 200 and not (streamed and stream_verdict(family, 200, first.text)), first.text
    path = vendor.requests[-1].split(" ")[1].split("?")[0]
    before = await _records()
    failures, sent = await _sweep(client, route, body, family, headers, current, _answers(valid(path)),
                                  streamed=streamed)
    assert not failures, "\n".join(failures)
    assert await _records() - before == sent  # each call recorded once, failed or not


IMAGE_USAGE = {"input_tokens": 5, "output_tokens": 272, "total_tokens": 277,
               "input_tokens_details": {"text_tokens": 5, "image_tokens": 0}}
GEMINI_IMAGE = {"candidates": [{"content": {"role": "model", "parts": [
    {"text": "a red hat"}, {"inlineData": {"mimeType": "image/png", "data": PNG}}]},
    "finishReason": "STOP", "index": 0}],
    "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 1290, "totalTokenCount": 1295,
                      "candidatesTokensDetails": [{"modality": "IMAGE", "tokenCount": 1290}]},
    "modelVersion": "vendor-model", "responseId": "r1"}
NATIVE_BODY = {"contents": [{"parts": [{"text": "a red hat"}]}]}
MEDIA_CASES = [
    ("openai images", "openai", "/v1", "kappa-image-1", "/v1/images/generations",
     {"model": "kappa-image-1", "prompt": "a red hat"}, "openai",
     {"created": 1, "data": [{"b64_json": PNG, "revised_prompt": "a red hat"}], "usage": IMAGE_USAGE,
      "output_format": "png", "size": "1024x1024", "quality": "low"}),
    ("seedream images", "ark", "/api/v3", "sigma-5.0-image", "/v1/images/generations",
     {"model": "sigma-5.0-image", "prompt": "a red hat"}, "openai",
     {"model": "vendor-model", "created": 1, "data": [{"b64_json": PNG, "size": "1024x1024"}],
      "usage": {"generated_images": 1, "output_tokens": 4096, "total_tokens": 4096}}),
    ("native buffered", "gemini", "/v1beta", "delta-3.1-flash-image",
     "/v1/models/delta-3.1-flash-image:generateContent", NATIVE_BODY, "native", GEMINI_IMAGE),
    ("native streamed", "gemini", "/v1beta", "delta-3.1-flash-image",
     "/v1/models/delta-3.1-flash-image:streamGenerateContent?alt=sse", NATIVE_BODY, "native",
     Events([(None, {"candidates": [{"content": {"role": "model", "parts": [{"text": "a red hat"}]}, "index": 0}],
                     "usageMetadata": {"promptTokenCount": 5, "totalTokenCount": 5},
                     "modelVersion": "vendor-model", "responseId": "r1"}),
             (None, GEMINI_IMAGE)])),
    ("native streamed, usage before the last chunk", "gemini", "/v1beta", "delta-3.1-flash-image",
     "/v1/models/delta-3.1-flash-image:streamGenerateContent?alt=sse", NATIVE_BODY, "native",
     Events([(None, {"candidates": [{"content": {"role": "model", "parts": [{"text": "a red hat"}]}, "index": 0}],
                     "usageMetadata": GEMINI_IMAGE["usageMetadata"], "modelVersion": "vendor-model"}),
             (None, {k: v for k, v in GEMINI_IMAGE.items() if k != "usageMetadata"})])),
    ("video protocol A", "ark", "/api/v3", "alpha-2.0-fast", "/v1/alpha/video/generations",
     {"model": "alpha-2.0-fast", "content": [{"type": "text", "text": "tide"}]}, "ark", {"id": "cgt-1"}),
    ("video protocol B", "dashscope", "/api/v1", "beta2.7-t2v", "/v1/beta/video/generations",
     {"model": "beta2.7-t2v", "input": {"prompt": "tide"}}, "dashscope",
     {"request_id": "r1", "output": {"task_id": "t1", "task_status": "PENDING"}}),
    ("video protocol C", "ark", "/api/v3", "alpha-2.0-fast", "/v1/video/generations",
     {"model": "alpha-2.0-fast", "prompt": "tide"}, "openai", {"id": "cgt-1"}),
]
# Embeddings and a token count, swept as the media cases are (one call, one answer).
EMBEDDING_CASES = [
    ("openai embeddings", "openai", "/v1", "omicron-embed-3-small", "/v1/embeddings",
     {"model": "omicron-embed-3-small", "input": ["a", "b"]}, "openai",
     {"object": "list", "model": "vendor-model", "usage": {"prompt_tokens": 2, "total_tokens": 2},
      "data": [{"object": "embedding", "index": 0, "embedding": [0.1, 0.2]},
               {"object": "embedding", "index": 1, "embedding": [0.3, 0.4]}]}),
    ("native embedContent", "gemini", "/v1beta", "delta-embedding-1", "/v1/models/delta-embedding-1:embedContent",
     {"content": {"parts": [{"text": "a"}]}}, "native", {"embeddings": [{"values": [0.1, 0.2]}]}),
    ("native batchEmbedContents", "gemini", "/v1beta", "delta-embedding-1",
     "/v1/models/delta-embedding-1:batchEmbedContents",
     {"requests": [{"model": "models/delta-embedding-1", "content": {"parts": [{"text": "a"}]}},
                   {"model": "models/delta-embedding-1", "content": {"parts": [{"text": "b"}]}}]}, "native",
     {"embeddings": [{"values": [0.1, 0.2]}, {"values": [0.3, 0.4]}]}),
    ("messages count_tokens", "anthropic", "/v1", MODEL, "/v1/messages/count_tokens",
     {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}, "messages", {"input_tokens": 3}),
]
# Routes that write no usage row of their own (a video task's is written when it ends; a count
# costs nothing).
UNRECORDED = ("/v1/alpha/", "/v1/beta/", "/v1/video/", "/v1/messages/count_tokens")
# A video task's poll, answered as running (the create's answer is the one changed).
POLLED = {"ark": {"id": "cgt-1", "model": "vendor-model", "status": "running"},
          "dashscope": {"request_id": "r2", "output": {"task_id": "t1", "task_status": "RUNNING"}}}



@pytest.mark.parametrize("case", MEDIA_CASES + EMBEDDING_CASES, ids=[case[0] for case in MEDIA_CASES + EMBEDDING_CASES])
async def test_a_media_embedding_or_count_answer_of_the_wrong_shape_is_the_familys_error(client, alice,
                                                                                         faulty_upstream, case):
    _, protocol, path, model, route, body, family, valid = case
    current: list[object] = []

    def reply(method: str, path: str, request: dict) -> tuple[int, object]:
        if method == "GET":  # a video task's poll
            return 200, POLLED[protocol]
        return 200, current[0] if current else valid

    faulty_upstream(protocol, path, {model: "vendor-model"}, reply)
    headers = _headers(alice.secret)
    first = await client.post(route, json=body, headers=headers)
    assert first.status_code == 200, first.text
    streamed = isinstance(valid, Events)
    before = await _records()
    failures, sent = await _sweep(client, route, body, family, headers, current, _answers(valid), streamed=streamed)
    assert not failures, "\n".join(failures)
    if not route.startswith(UNRECORDED):
        assert await _records() - before == sent  # each call recorded once, failed or not
