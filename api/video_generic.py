"""Generic protocol C (``/v1/video/generations``) and the signed callback address upstreams post to."""

from __future__ import annotations

import orjson
from django.http import HttpRequest, HttpResponse
from ninja import Router

from studio.gateway import video_callbacks, video_tasks
from studio.gateway.errors import BadRequest
from studio.gateway.video_render import render_generic

from .auth import bearer_key, principal_for
from .native import parse_json
from .video_alpha import json_response

router = Router(tags=["video: generic protocol C"])
BODY_DOC = {"requestBody": {"required": True, "content": {"application/json": {"schema": {
    "type": "object", "required": ["model"],
    "properties": {"model": {"type": "string"}, "prompt": {"type": "string"},
                   "medias": {"type": "array", "items": {"type": "object"}}},
}}}}}


@router.post("/video/generations", openapi_extra=BODY_DOC, summary="Create a video task (generic protocol)")
async def create(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    task = await video_tasks.create(principal, "C", parse_json(request))
    return json_response({"task_id": task.id, "status": "queued"})


@router.get("/video/generations/{task_id}", summary="Query a video task (generic protocol)")
async def query(request: HttpRequest, task_id: str) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    return json_response(render_generic(await video_tasks.get_for(principal, "C", task_id)))


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
