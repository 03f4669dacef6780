"""Protocol C (generic): ``/v1/video/generations``, and the signed callback address upstreams post to."""

from __future__ import annotations

import orjson
from django.http import HttpRequest, HttpResponse

from api.auth import bearer_key, principal_for
from api.body import json_response, parse_json
from api.errors import OPENAI
from api.openapi import BEARER, body_doc
from api.routing import FamilyRouter
from api.video.answer import task_response
from api.video.render import render_generic
from api.video.schemas import GenericVideoRequest
from studio.core.errors import BadRequest
from studio.gateway.video import actions as video_actions
from studio.gateway.video import callbacks as video_callbacks
from studio.gateway.video import tasks as video_tasks

router = FamilyRouter(OPENAI, security=BEARER, tags=["video: protocol C (generic)"])


@router.post("/video/generations", openapi_extra=body_doc(json=GenericVideoRequest),
             summary="Create a protocol C (generic) video task")
async def create(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    task = await video_tasks.create(principal, "generic", parse_json(request))
    return json_response({"task_id": task.id, "status": "queued"})


@router.get("/video/generations/{task_id}", summary="Query a protocol C (generic) video task")
async def query(request: HttpRequest, task_id: str) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    view = await video_tasks.read(principal, "generic", task_id)
    return task_response(render_generic(view), view)


@router.post("/video/generations/{task_id}/cancel", summary="Cancel a protocol C (generic) video task")
async def cancel(request: HttpRequest, task_id: str) -> HttpResponse:
    """The task record as it stands afterwards (``status: cancelled``)."""
    principal = await principal_for(bearer_key(request))
    view = await video_actions.cancel(principal, "generic", task_id)
    return task_response(render_generic(view), view)


@router.post("/video/callbacks/{task_id}/{signature}", include_in_schema=False)
async def upstream_callback(request: HttpRequest, task_id: str, signature: str) -> HttpResponse:
    try:
        record = orjson.loads(request.body)
    except orjson.JSONDecodeError:
        record = None
    if not isinstance(record, dict):
        video_callbacks.verify(task_id, signature)  # a bad signature is a 403 before anything else
        raise BadRequest("the callback body must be a JSON task record", param="body")
    await video_callbacks.receive(task_id, signature, record)
    return json_response({"received": True})


@router.post("/video/callbacks/{task_id}", include_in_schema=False)
async def unsigned_callback(request: HttpRequest, task_id: str) -> HttpResponse:
    video_callbacks.verify(task_id, None)
    return json_response({})
