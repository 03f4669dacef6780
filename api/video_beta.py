"""Protocol B: ``/v1/beta/video/generations`` create and query (spec/video.md); DashScope-style errors."""

from __future__ import annotations

import uuid

from django.http import HttpRequest, HttpResponse
from ninja import Router

from studio.gateway import video_tasks
from studio.gateway.video_render import render_beta

from .auth import bearer_key, principal_for
from .native import parse_json
from .video_alpha import json_response

router = Router(tags=["video: protocol B"])
BODY_DOC = {"requestBody": {"required": True, "content": {"application/json": {"schema": {
    "type": "object", "required": ["model"],
    "properties": {"model": {"type": "string"}, "input": {"type": "object"}, "parameters": {"type": "object"}},
}}}}}


@router.post("/beta/video/generations", openapi_extra=BODY_DOC, summary="Create a protocol B video task")
async def create(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    task = await video_tasks.create(principal, "B", parse_json(request))
    return json_response({"request_id": str(uuid.uuid4()), "output": {"task_id": task.id, "task_status": "PENDING"}})


@router.get("/beta/video/generations/{task_id}", summary="Query a protocol B video task")
async def query(request: HttpRequest, task_id: str) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    return json_response(render_beta(await video_tasks.get_for(principal, "B", task_id)))
