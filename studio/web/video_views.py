"""The Video page (the user's tasks with live status, finished videos playable) and mirrored files."""

from __future__ import annotations

import orjson
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from studio.core.errors import GatewayError
from studio.core.principal import Principal
from studio.gateway import prices
from studio.gateway.cost import video_second_price
from studio.gateway.video.apply import event_data
from studio.gateway.video.signing import file_valid, webhook_secret
from studio.models import ApiKey, ModelKind, PlatformModel, VideoTask
from studio.web import video_forms
from studio.web.files import stream_file

PAGE_SIZE = 50
TYPICAL_SAMPLE = 200
FILE_KINDS = {"video.mp4": "video", "last_frame.png": "last_frame", "poster.jpg": "video"}
POSTER_MAX_SIDE = 640


def task_row(task: VideoTask) -> dict:
    """A task as its card shows it: the same fields as its live status events, with page-relative links."""
    row = event_data(task)
    for name in ("video_url", "last_frame_url", "poster_url"):
        row[name] = local_path(row[name])
    return {**row, "id": task.id}


def local_path(url: str) -> str:
    """Our own file links relative to the page (the upstream's stay absolute)."""
    base = settings.PUBLIC_BASE_URL
    return url[len(base):] if base and url.startswith(base + "/") else url


def typical_times() -> dict[str, list[float]]:
    """Seconds from creation to success of each model's recent tasks (all users': a model's pace)."""
    samples: dict[str, list[float]] = {}
    rows = (VideoTask.objects.filter(status="succeeded", finished_at__isnull=False).order_by("-created")
            .values_list("model_id", "created", "finished_at")[:TYPICAL_SAMPLE])
    for model_id, created, finished in rows:
        samples.setdefault(model_id, []).append(max(0.0, (finished - created).total_seconds()))
    return samples


def video_models() -> list[dict]:
    """The models the page offers: name, options, presets, price per second and typical time."""
    samples = typical_times()
    models = []
    for m in PlatformModel.objects.filter(kind=ModelKind.VIDEO, enabled=True).order_by("model_id"):
        caps = m.capabilities or {}
        if "video.generic" not in (m.routes or []) or caps.get("mode") == "videoedit":
            continue  # editing a video needs a video input, which this page does not take
        options = video_forms.model_options(caps)
        models.append({
            "id": m.model_id, "name": video_forms.model_name(m.model_id, m.display_name, caps),
            "options": options, "presets": video_forms.presets_for(options),
            "per_second": per_second_prices(m.model_id, options), "typical": video_forms.typical_time(
                samples.get(m.model_id, [])),
        })
    return models


def per_second_prices(model_id: str, options: dict) -> dict[str, float]:
    """US dollars per second of video by resolution (``720p+audio`` with sound), as priced today."""
    price = prices.current(model_id)
    if price is None:
        return {}
    table = {}
    for resolution in options["resolutions"]:
        for audio in (False, True):
            rate = video_second_price(price, resolution, audio)
            if rate is not None:
                table[resolution + ("+audio" if audio else "")] = float(rate)
    return table


@login_required
def video_page(request: HttpRequest) -> HttpResponse:
    tasks = [task_row(t) for t in VideoTask.objects.filter(user=request.user).order_by("-created")[:PAGE_SIZE]]
    keys = [{"name": k.name, "prefix": k.prefix, "secret": webhook_secret(k.id, request.user.id)}
            for k in ApiKey.objects.filter(owner=request.user, revoked=False)]
    return render(request, "studio/video.html", {
        "tasks": tasks, "models": video_models(), "webhook_keys": keys,
        "pickable": video_forms.picker_assets(request.user), "upload_url": reverse("generate-upload"),
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
    """The page creates tasks through the same engine as the API (generic, protocol C)."""
    from studio.gateway.video import tasks as video_tasks

    user = await request.auser()
    try:
        body = await sync_to_async(video_forms.build_body)(user, orjson.loads(request.body))
        task = await video_tasks.create(Principal(user_id=user.id), "generic", body)
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
    if kind == "poster.jpg":
        return HttpResponse(poster_jpeg(asset), content_type="image/jpeg",
                            headers={"Cache-Control": "private, max-age=31536000, immutable"})
    return stream_file(request, asset.file.storage, asset.file.name, asset.bytes, asset.mime,
                       cache_control="private, max-age=31536000, immutable")


def poster_jpeg(video) -> bytes:
    """A still for a video's card: its first frame, as a small JPEG."""
    import io

    import av

    with video.file.storage.open(video.file.name, "rb") as handle, av.open(handle) as container:
        frame = next(container.decode(video=0), None)
    if frame is None:
        raise Http404
    image = frame.to_image().convert("RGB")
    image.thumbnail((POSTER_MAX_SIDE, POSTER_MAX_SIDE))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=82)
    return out.getvalue()


urlpatterns = [
    path("", video_page, name="video"),
    path("create", create_task, name="video-create"),
    path("tasks", task_rows, name="video-tasks"),
    path("files/<str:task_id>/<str:kind>", video_file, name="video-file"),
]
