"""``POST /v1/models/{model}:generateContent`` and ``:streamGenerateContent`` (spec/images.md), and
the native family's ``:countTokens``, ``:embedContent`` and ``:batchEmbedContents``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

from api.auth import native_key, principal_for
from api.body import JsonAnswer, json_response, parse_json
from api.sse import start_stream
from studio.core import streams
from studio.core.embeddings import EmbeddingJob
from studio.core.errors import BadRequest
from studio.core.open_frames import FrameHead, FramePart, FrameTail, StringPiece
from studio.gateway.embeddings import engine as embeddings_engine
from studio.gateway.native import engine as native_image

# Big bodies leave in pieces of this size: each piece is copied once into the response, the
# whole 10-20 MB answer never is.
PIECE = 1024 * 1024


def pieces(payload: bytes | bytearray) -> list[bytes | memoryview]:
    if len(payload) <= PIECE:
        return [bytes(payload)]
    view = memoryview(payload)
    return [view[i:i + PIECE] for i in range(0, len(view), PIECE)]


def sse_frame(payload: bytes | bytearray) -> list[bytes | memoryview]:
    """``data: <one response JSON>`` and a blank line: no event names, no ``[DONE]`` (spec: Events)."""
    if len(payload) <= PIECE:
        return [b"".join((b"data: ", payload, b"\n\n"))]  # one copy (``+`` made three)
    return [b"data: ", *pieces(payload), b"\n\n"]


class SseFrames:
    """Events as SSE, an open frame's parts (``studio.core.open_frames``) as they come: its head
    starts the event, its tail ends it. An error in the middle of an open frame cannot become an
    error event (the client is inside a ``data`` line): the answer is cut off instead, as a byte
    relay's would be, so the client sees a broken stream, not a frame that never ends."""

    __slots__ = ("open",)

    def __init__(self) -> None:
        self.open = False

    def frame(self, item: bytes | bytearray | FramePart) -> list[bytes | memoryview]:
        if isinstance(item, StringPiece):
            return [item.data]
        if isinstance(item, FrameHead):
            self.open = True
            return [b"data: " + item.data]
        if isinstance(item, FrameTail):
            self.open = False
            tail = item.data
            return [b"".join((tail, b"\n\n"))] if len(tail) <= PIECE else [*pieces(tail), b"\n\n"]
        return sse_frame(item)

    def error(self, payload: bytes) -> list[bytes | memoryview]:
        if self.open:
            raise streams.Cut("the upstream failed inside a frame already partly sent")
        return sse_frame(payload)


async def _body(payload: bytes | bytearray) -> AsyncIterator[bytes | memoryview]:
    for piece in pieces(payload):
        yield piece


async def _prepare(request: HttpRequest, model: str, *, stream: bool) -> native_image.NativeCall:
    principal = await principal_for(native_key(request))
    return await native_image.prepare(principal, model, parse_json(request), stream=stream, raw=request.body)


async def generate_content(request: HttpRequest, model: str) -> HttpResponse:
    call = await _prepare(request, model, stream=False)
    body = await native_image.generate(call)
    if len(body) <= PIECE:
        return JsonAnswer(bytes(body))
    response = StreamingHttpResponse(_body(body), content_type="application/json")
    response["Content-Length"] = str(len(body))
    return response


async def count_tokens(request: HttpRequest, model: str) -> HttpResponse:
    principal = await principal_for(native_key(request))
    answer = await native_image.count_tokens(principal, model, parse_json(request), request.body)
    return JsonAnswer(answer)


async def stream_generate_content(request: HttpRequest, model: str) -> HttpResponse:
    """Always SSE: with the vendor's ``?alt=sse`` (which its client sends) or without it."""
    call = await _prepare(request, model, stream=True)
    events = SseFrames()
    return await start_stream(request, native_image.stream(call, passing=True), frame=events.frame,
                              error_frame=events.error)


def _texts(request: Any, where: str) -> str:
    content = request.get("content") if isinstance(request, dict) else None
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list):
        raise BadRequest(f"{where}content.parts: the content to embed is required", param=f"{where}content")
    return " ".join(str(p["text"]) for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))


def _embed_settings(item: dict[str, Any], where: str) -> tuple[int | None, str | None, str | None]:
    """An embed request's ``outputDimensionality``, ``taskType`` and ``title``, each of its type
    (``BadRequest`` naming the field otherwise)."""
    dimensions, task_type, title = item.get("outputDimensionality"), item.get("taskType"), item.get("title")
    if dimensions is not None and (not isinstance(dimensions, int) or isinstance(dimensions, bool)):
        raise BadRequest(f"{where}outputDimensionality: must be an integer", param=f"{where}outputDimensionality")
    for name, value in (("taskType", task_type), ("title", title)):
        if value is not None and not isinstance(value, str):
            raise BadRequest(f"{where}{name}: must be a string", param=f"{where}{name}")
    return dimensions, task_type, title


def _embed_job(model: str, requests: list[Any], prefix: str) -> EmbeddingJob:
    """One job from native embed requests; their settings must agree (one call upstream)."""
    settings = set()
    for index, item in enumerate(requests):
        where = prefix.format(index=index)
        named = item.get("model") if isinstance(item, dict) else None
        if named is not None and (not isinstance(named, str) or named.removeprefix("models/") != model):
            raise BadRequest(f"{where}model: must be models/{model}, the model of the request", param=f"{where}model")
        settings.add(_embed_settings(item, where) if isinstance(item, dict) else None)
    if len(settings) > 1:
        raise BadRequest("every request of a batch must use the same outputDimensionality, taskType and title",
                         param="requests")
    dimensions, task_type, title = next(iter(settings)) or (None, None, None)
    texts = tuple(_texts(item, prefix.format(index=i)) for i, item in enumerate(requests))
    return EmbeddingJob(inputs=texts, dimensions=dimensions, task_type=task_type, title=title)


async def _embed(request: HttpRequest, model: str, job: EmbeddingJob, field: str):
    principal = await principal_for(native_key(request))
    return await embeddings_engine.embed(principal, model, job, route=embeddings_engine.NATIVE_ROUTE, field=field,
                                         dimensions_field="outputDimensionality")


async def embed_content(request: HttpRequest, model: str) -> HttpResponse:
    body = parse_json(request)
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object", param="body")
    result = await _embed(request, model, _embed_job(model, [body], ""), "content")
    return json_response({"embedding": {"values": result.vectors[0]}})


async def batch_embed_contents(request: HttpRequest, model: str) -> HttpResponse:
    body = parse_json(request)
    requests = body.get("requests") if isinstance(body, dict) else None
    if not isinstance(requests, list) or not requests:
        raise BadRequest("requests: at least one embed request is required", param="requests")
    result = await _embed(request, model, _embed_job(model, requests, "requests[{index}]."), "requests")
    return json_response({"embeddings": [{"values": v} for v in result.vectors]})
