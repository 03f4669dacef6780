"""Protocol A (ark): ``/v1/alpha/video/generations`` create, query, list and cancel (spec/video.md).

List and cancel are Ark's own task calls (``GET …/tasks?page_num&page_size&filter.*`` →
``{total, items}``; ``DELETE …/tasks/{id}``) on the gateway's path. Errors are Ark-style.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from api.auth import bearer_key, principal_for
from api.body import json_response, parse_json
from api.errors import ARK
from api.openapi import BEARER, body_doc
from api.routing import FamilyRouter
from api.video.answer import task_response
from api.video.render import render_ark
from api.video.schemas import ArkVideoRequest
from studio.core.errors import BadRequest
from studio.gateway.video import actions as video_actions
from studio.gateway.video import tasks as video_tasks

router = FamilyRouter(ARK, security=BEARER, tags=["video: protocol A (ark)"])


@router.post("/alpha/video/generations", openapi_extra=body_doc(json=ArkVideoRequest),
             summary="Create a protocol A (ark) video task")
async def create(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    task = await video_tasks.create(principal, "ark", parse_json(request))
    return json_response({"id": task.id})


@router.get("/alpha/video/generations/{task_id}", summary="Query a protocol A (ark) video task")
async def query(request: HttpRequest, task_id: str) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    view = await video_tasks.read(principal, "ark", task_id)
    return task_response(render_ark(view), view)


def _int(request: HttpRequest, name: str, default: int) -> int:
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise BadRequest(f"{name} must be an integer", param=name) from None


@router.get("/alpha/video/generations", summary="List protocol A (ark) video tasks of the last 7 days")
async def list_tasks(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    query = video_actions.TaskFilter(
        page_num=_int(request, "page_num", 1), page_size=_int(request, "page_size", 10),
        status=request.GET.get("filter.status", ""), task_ids=tuple(request.GET.getlist("filter.task_ids")),
        model=request.GET.get("filter.model", ""), service_tier=request.GET.get("filter.service_tier", ""),
    )
    total, views = await video_actions.list_tasks(principal, "ark", query)
    return json_response({"total": total, "items": [render_ark(view) for view in views]})


@router.delete("/alpha/video/generations/{task_id}", summary="Cancel a queued protocol A (ark) video task")
async def cancel(request: HttpRequest, task_id: str) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    await video_actions.cancel(principal, "ark", task_id)
    return json_response({})
