"""``POST /v1/images/generations`` and ``POST /v1/images/edits`` (spec/images.md).

JSON bodies, and for edits also ``multipart/form-data`` as the official SDK sends it (``image``,
repeated ``image[]``, ``mask``, optionally a ``background`` file). Errors use the OpenAI-style
body of this family.
"""

from __future__ import annotations

from typing import Any

import orjson
from django.http import HttpRequest, HttpResponse
from ninja import Router

from studio.gateway import images_engine
from studio.gateway.errors import BadRequest
from studio.gateway.images_record import ImagesRecord
from studio.gateway.images_types import ImageJob

from .auth import bearer_key, principal_for
from .images_render import layered_events, response_body, standard_events
from .sse import data_frame, named_frame, start_stream

router = Router(tags=["images"])

INT_FORM_FIELDS = ("n", "output_compression", "partial_images")
BOOL_FORM_FIELDS = ("stream", "watermark", "layer_decomposition")
MAX_UPLOADS = 16


def json_body(request: HttpRequest) -> dict[str, Any]:
    try:
        body = orjson.loads(request.body or b"null")
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"the request body is not valid JSON: {exc}", param="body", code="invalid_json") from exc
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object", param="body", code="invalid_json")
    return body


def _coerce(name: str, value: str) -> Any:
    """Form fields are strings; give numbers and booleans their JSON types."""
    if name in INT_FORM_FIELDS:
        try:
            return int(value)
        except ValueError:
            raise BadRequest(f"invalid '{name}': expected an integer", param=name, code="invalid_type") from None
    if name in BOOL_FORM_FIELDS:
        if value.lower() not in ("true", "false", "1", "0"):
            raise BadRequest(f"invalid '{name}': expected true or false", param=name, code="invalid_type")
        return value.lower() in ("true", "1")
    return value


def form_body(request: HttpRequest) -> tuple[dict[str, Any], dict[str, list[tuple[bytes, str]]]]:
    fields = {name: _coerce(name, request.POST[name]) for name in request.POST}
    uploads: dict[str, list[tuple[bytes, str]]] = {}
    count = 0
    for name in request.FILES:
        for upload in request.FILES.getlist(name):
            count += 1
            if count > MAX_UPLOADS + 2:
                raise BadRequest("too many files in the request", param=name, code="too_many_images")
            uploads.setdefault(name, []).append((upload.read(), upload.name or ""))
    return fields, uploads


async def respond(request: HttpRequest, job: ImageJob, principal: Any) -> HttpResponse:
    if job.stream:
        record = ImagesRecord(principal=principal, job=job)
        events = images_engine.stream(principal, job, record)
        if job.family == "layered":
            frames = layered_events(job, events)
            return await start_stream(request.path, frames, frame=_frame, error_frame=data_frame)
        return await start_stream(request.path, standard_events(job, events), frame=_frame,
                                  error_frame=lambda body: named_frame("error", body))
    result, _record = await images_engine.run(principal, job)
    return HttpResponse(orjson.dumps(response_body(job, result)), content_type="application/json")


def _frame(frame: Any) -> list[bytes]:
    name, payload = frame
    return data_frame(payload) if name is None else named_frame(name, payload)


@router.post("/images/generations", summary="Generate images (standard or layered/sequential extension)")
async def generations(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    job = await images_engine.prepare_generation(principal, json_body(request))
    return await respond(request, job, principal)


@router.post("/images/edits", summary="Edit images (inpainting, outpainting, references)")
async def edits(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    if (request.content_type or "").startswith("multipart/form-data"):
        fields, uploads = form_body(request)
        job = await images_engine.prepare_edit(principal, fields, uploads)
    else:
        job = await images_engine.prepare_edit(principal, json_body(request))
    return await respond(request, job, principal)
