"""Protocol B (dashscope): ``/v1/beta/video/generations`` create, query and cancel (spec/video.md).

As at DashScope, a query for a task that does not exist (or is no longer kept) is not an error:
it answers 200 with ``task_status: UNKNOWN``. Cancel is DashScope's ``POST …/tasks/{id}/cancel``
on the gateway's path. Errors are DashScope-style.
"""

from __future__ import annotations

import uuid

from django.http import HttpRequest, HttpResponse

from api.auth import bearer_key, principal_for
from api.body import json_response, parse_json
from api.errors import DASHSCOPE
from api.openapi import BEARER, body_doc
from api.routing import FamilyRouter
from api.video.answer import task_response
from api.video.render import render_dashscope
from api.video.schemas import DashScopeVideoRequest
from studio.core.errors import NotFound
from studio.gateway.video import actions as video_actions
from studio.gateway.video import tasks as video_tasks

router = FamilyRouter(DASHSCOPE, security=BEARER, tags=["video: protocol B (dashscope)"])


@router.post("/beta/video/generations", openapi_extra=body_doc(json=DashScopeVideoRequest),
             summary="Create a protocol B (dashscope) video task")
async def create(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    task = await video_tasks.create(principal, "dashscope", parse_json(request))
    return json_response({"request_id": str(uuid.uuid4()), "output": {"task_id": task.id, "task_status": "PENDING"}})


@router.get("/beta/video/generations/{task_id}", summary="Query a protocol B (dashscope) video task")
async def query(request: HttpRequest, task_id: str) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    try:
        view = await video_tasks.read(principal, "dashscope", task_id)
    except NotFound:
        return json_response({"request_id": str(uuid.uuid4()),
                              "output": {"task_id": task_id, "task_status": "UNKNOWN"}})
    return task_response(render_dashscope(view), view)


@router.post("/beta/video/generations/{task_id}/cancel", summary="Cancel a PENDING protocol B (dashscope) task")
async def cancel(request: HttpRequest, task_id: str) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    await video_actions.cancel(principal, "dashscope", task_id)
    return json_response({"request_id": str(uuid.uuid4())})
