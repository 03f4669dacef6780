"""Protocol A: ``/v1/alpha/video/generations`` create and query (spec/video.md); Ark-style errors."""

from __future__ import annotations

import orjson
from django.http import HttpRequest, HttpResponse
from ninja import Router

from studio.gateway import video_tasks
from studio.gateway.video_render import render_alpha

from .auth import bearer_key, principal_for
from .native import parse_json

router = Router(tags=["video: protocol A"])
BODY_DOC = {"requestBody": {"required": True, "content": {"application/json": {"schema": {
    "type": "object", "required": ["model", "content"],
    "properties": {"model": {"type": "string"}, "content": {"type": "array", "items": {"type": "object"}}},
}}}}}


def json_response(value: object, status: int = 200) -> HttpResponse:
    return HttpResponse(orjson.dumps(value), status=status, content_type="application/json")


@router.post("/alpha/video/generations", openapi_extra=BODY_DOC, summary="Create a protocol A video task")
async def create(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    task = await video_tasks.create(principal, "A", parse_json(request))
    return json_response({"id": task.id})


@router.get("/alpha/video/generations/{task_id}", summary="Query a protocol A video task")
async def query(request: HttpRequest, task_id: str) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    return json_response(render_alpha(await video_tasks.get_for(principal, "A", task_id)))
