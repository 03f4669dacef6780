"""``POST /v1/images/generations`` and ``POST /v1/images/edits`` (spec/images.md).

JSON bodies, and for edits also ``multipart/form-data`` as the official SDK sends it (``image``,
repeated ``image[]``, ``mask``, optionally a ``background`` file). Errors use the OpenAI-style
body of this family.
"""

from __future__ import annotations

from typing import Any

import orjson
from django.http import HttpRequest, HttpResponse

from api.auth import bearer_key, principal_for
from api.body import JsonAnswer, json_object
from api.images.forms import form_body
from api.images.render import layered_events, response_body, standard_events
from api.sse import data_frame, named_frame, start_stream
from studio.core.images import ImageJob
from studio.core.principal import Principal
from studio.gateway.images import engine as images_engine
from studio.gateway.images.record import ImagesRecord


async def respond(request: HttpRequest, job: ImageJob, principal: Principal) -> HttpResponse:
    if job.stream:
        record = ImagesRecord(principal=principal, job=job)
        events = images_engine.stream(principal, job, record)
        if job.family == "layered":
            frames = layered_events(job, events)
            return await start_stream(request, frames, frame=_frame, error_frame=data_frame)
        return await start_stream(request, standard_events(job, events), frame=_frame,
                                  error_frame=lambda body: named_frame("error", body))
    result, _record = await images_engine.run(principal, job)
    return JsonAnswer(orjson.dumps(response_body(job, result)))


def _frame(frame: Any) -> list[bytes]:
    name, payload = frame
    return data_frame(payload) if name is None else named_frame(name, payload)


async def generations(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    job = await images_engine.prepare_generation(principal, json_object(request))
    return await respond(request, job, principal)


async def edits(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    if (request.content_type or "").startswith("multipart/form-data"):
        fields, uploads = form_body(request)
        job = await images_engine.prepare_edit(principal, fields, uploads)
    else:
        job = await images_engine.prepare_edit(principal, json_object(request))
    return await respond(request, job, principal)
