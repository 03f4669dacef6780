"""The Video page (the user's tasks with live status, finished videos playable) and mirrored files."""

from __future__ import annotations

import orjson
from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import path
from django.views.decorators.http import require_POST

from studio.gateway.errors import GatewayError
from studio.gateway.principal import Principal
from studio.gateway.video_signing import file_path, file_valid, webhook_secret
from studio.models import ApiKey, ModelKind, PlatformModel, VideoTask

from . import video_forms
from .files import stream_file

PAGE_SIZE = 50
FILE_KINDS = {"video.mp4": "video", "last_frame.png": "last_frame"}


def task_row(task: VideoTask) -> dict:
    return {
        "id": task.id, "model": task.model_id, "protocol": task.protocol, "status": task.status,
        "prompt": task.prompt[:300], "created": task.created.isoformat(),
        "video_url": file_path(task.id, "video.mp4") if task.video_id else task.video_upstream_url,
        "last_frame_url": file_path(task.id, "last_frame.png") if task.last_frame_id else "",
        "error_code": task.error_code, "error_message": task.error_message,
        "video_asset": str(task.video_id or ""),
    }


@login_required
def video_page(request: HttpRequest) -> HttpResponse:
    tasks = [task_row(t) for t in VideoTask.objects.filter(user=request.user).order_by("-created")[:PAGE_SIZE]]
    models = [{"id": m.model_id, "options": video_forms.model_options(m.capabilities)}
              for m in PlatformModel.objects.filter(kind=ModelKind.VIDEO, enabled=True).order_by("model_id")
              if "video.generic" in (m.routes or [])]
    keys = [{"name": k.name, "prefix": k.prefix, "secret": webhook_secret(k.id, request.user.id)}
            for k in ApiKey.objects.filter(owner=request.user, revoked=False)]
    return render(request, "studio/video.html", {
        "tasks": tasks, "tasks_json": orjson.dumps(tasks).decode(), "models": models,
        "webhook_keys": keys, "pickable": video_forms.picker_assets(request.user),
    })


@login_required
def task_rows(request: HttpRequest) -> JsonResponse:
    """The current rows of some of the user's tasks: a page catches up after missing live events."""
    ids = [i for i in request.GET.get("ids", "").split(",") if i][:PAGE_SIZE]
    tasks = VideoTask.objects.filter(user=request.user, id__in=ids)
    return JsonResponse({"tasks": [task_row(t) for t in tasks]})


@login_required
@require_POST
async def create_task(request: HttpRequest) -> HttpResponse:
    """The page creates tasks through the same engine as the API (generic protocol C)."""
    from studio.gateway import video_tasks

    user = await request.auser()
    try:
        body = await sync_to_async(video_forms.build_body)(user, orjson.loads(request.body))
        task = await video_tasks.create(Principal(user_id=user.id), "C", body)
    except orjson.JSONDecodeError:
        return JsonResponse({"error": {"message": "the body is not JSON", "param": "body"}}, status=400)
    except video_forms.FormError as exc:
        return JsonResponse({"error": {"message": exc.message, "param": exc.param}}, status=400)
    except GatewayError as exc:
        return JsonResponse({"error": {"message": exc.message, "param": exc.param}}, status=exc.status)
    return JsonResponse({"task": task_row(task)})


def video_file(request: HttpRequest, task_id: str, kind: str) -> HttpResponse:
    """A mirrored file by its signed URL (clients of the API have no session), with HTTP Range."""
    role = FILE_KINDS.get(kind)
    if role is None or not file_valid(task_id, kind, request.GET.get("sig")):
        raise Http404
    task = VideoTask.objects.select_related("video", "last_frame").filter(id=task_id).first()
    asset = getattr(task, role, None) if task is not None else None
    if asset is None:
        raise Http404
    return stream_file(request, asset.file.storage, asset.file.name, asset.bytes, asset.mime,
                       cache_control="private, max-age=31536000, immutable")


urlpatterns = [
    path("", video_page, name="video"),
    path("create", create_task, name="video-create"),
    path("tasks", task_rows, name="video-tasks"),
    path("files/<str:task_id>/<str:kind>", video_file, name="video-file"),
]
