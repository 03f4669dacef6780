"""The mask canvas: paint over a picture, then inpaint, outpaint or edit it with any edit model.

The page paints the mask as a layer of its own and posts it with the request; here it becomes the
vendor's mask PNG (``studio.gateway.images.masks``), is stored as its own asset (role "mask", linked to
the job), and the edit runs as a studio job through the same images or native engine as /v1. The
page follows the job over its WebSocket, like the Generate page.
"""

from __future__ import annotations

import io
import uuid
from dataclasses import dataclass
from typing import Any

import orjson
from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import path, reverse
from django.views.decorators.http import require_GET, require_POST
from PIL import Image

from studio.core.entries import ModelEntry
from studio.core.errors import BadRequest, GatewayError, NotFound
from studio.core.principal import Principal
from studio.gateway import permissions as access
from studio.gateway import snapshot
from studio.gateway.images import masks
from studio.gateway.images.engine import family_of
from studio.gateway.jobs.access import team_for_saving
from studio.gateway.jobs.base import StudioJob
from studio.gateway.jobs.canvas import ToolImagesJob, ToolNativeJob, launch_from_request
from studio.gateway.jobs.inputs import InputImage
from studio.gateway.jobs.native import native_body
from studio.gateway.media.storage import store_bytes
from studio.models import Asset
from studio.web.generate_views import image_models, saving_teams

MAX_PROMPT = 10000
# Mode → the model capability it needs (None: any edit model). Rules as data, not scattered ifs.
MODE_NEEDS: dict[str, str | None] = {"inpaint": "mask", "outpaint": "outpaint", "edit": None}
BACKGROUND_KINDS = ("prompt", "colour", "asset")
PASSED_OPTIONS = ("quality", "output_format")  # standard-family options the canvas offers


def error_json(exc: GatewayError) -> JsonResponse:
    return JsonResponse({"error": {"message": exc.message, "param": exc.param}}, status=exc.status)


def parse_body(request: HttpRequest) -> dict[str, Any]:
    try:
        payload = orjson.loads(request.body or b"{}")
    except orjson.JSONDecodeError:
        raise BadRequest("the request body is not valid JSON", param="body") from None
    if not isinstance(payload, dict):
        raise BadRequest("the request body must be a JSON object", param="body")
    return payload


def prompt_of(payload: dict[str, Any]) -> str:
    prompt = str(payload.get("prompt") or "").strip()
    if not prompt:
        raise BadRequest("Describe the change first.", param="prompt")
    if len(prompt) > MAX_PROMPT:
        raise BadRequest(f"the prompt is too long ({len(prompt)} characters; at most {MAX_PROMPT})", param="prompt")
    return prompt


async def edit_model(model_id: Any) -> ModelEntry:
    snap = await snapshot.get()
    model = snap.models.get(str(model_id or ""))
    if model is None or model.kind not in ("native-image", "image") or "images.edits" not in model.routes:
        raise NotFound(f"'{model_id}' is not a model that edits images", param="model")
    return model


def input_image(asset: Asset) -> InputImage:
    with asset.file.open("rb") as handle:
        return InputImage(asset_id=asset.id, mime=asset.mime, owner_id=asset.owner_id, team_id=asset.team_id,
                          data=handle.read())


def image_source(image: InputImage, user_id: int) -> dict[str, str]:
    # The user's own file travels by id (lineage kept); a team's picture goes as data, since the
    # engine's file ids resolve only what the caller owns.
    if image.owner_id == user_id:
        return {"file_id": f"file-{image.asset_id}"}
    return {"image_url": image.data_uri()}


def visible_image(user, raw_id: Any, field: str) -> Asset:
    try:
        asset = access.visible_asset_or_404(user, uuid.UUID(str(raw_id)))
    except (ValueError, Http404):
        raise BadRequest(f"{field}: no such image", param=field) from None
    if asset.kind != "image":
        raise BadRequest(f"{field}: not an image", param=field)
    return asset


def data_uri(png: bytes) -> str:
    import base64

    return "data:image/png;base64," + base64.b64encode(png).decode()


@dataclass(slots=True)
class CanvasPlan:
    """What one canvas submission sends: the request body, the mask to store, the tool's record."""

    body: dict[str, Any]
    mask_png: bytes | None
    tool: dict[str, Any]
    source: InputImage
    source_generation: uuid.UUID | None


def _frame(payload: dict[str, Any], size: tuple[int, int]) -> masks.OutpaintFrame:
    raw = payload.get("frame")
    if not isinstance(raw, dict):
        raise BadRequest("outpainting needs a frame: {left, top, right, bottom} margins in pixels", param="frame")
    margins = {}
    for side in ("left", "top", "right", "bottom"):
        value = raw.get(side, 0)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        margins[side] = value
    return masks.OutpaintFrame.around(size, **margins)


def _background(user, payload: dict[str, Any]) -> tuple[str, Any]:
    raw = payload.get("background") if isinstance(payload.get("background"), dict) else {"kind": "prompt"}
    kind = str(raw.get("kind") or "prompt")
    if kind not in BACKGROUND_KINDS:
        raise BadRequest(f"background.kind must be one of {', '.join(BACKGROUND_KINDS)}", param="background.kind")
    if kind == "colour":
        return kind, masks.parse_colour(raw.get("value"))
    if kind == "asset":
        asset = visible_image(user, raw.get("value"), "background.value")
        with asset.file.open("rb") as handle, Image.open(io.BytesIO(handle.read())) as picture:
            return kind, picture.convert("RGB")
    return kind, None


def plan_canvas(user, asset_id: uuid.UUID, model: ModelEntry, payload: dict[str, Any], prompt: str) -> CanvasPlan:
    """Validate a submission and prepare its images (sync: file reads and queries)."""
    asset = access.visible_asset_or_404(user, asset_id)
    if asset.kind != "image":
        raise BadRequest("only images can be edited on the canvas", param="asset")
    source = input_image(asset)
    mode = str(payload.get("mode") or "inpaint")
    if mode not in MODE_NEEDS:
        raise BadRequest(f"mode must be one of {', '.join(MODE_NEEDS)}", param="mode")
    needed = MODE_NEEDS[mode]
    if needed and not model.capabilities.get(needed):
        raise BadRequest(f"model '{model.model_id}' cannot {mode} (it edits the whole picture from your words); "
                         "choose 'Edit whole image' or a model with masks", param="mode")
    family = family_of(model)
    tool: dict[str, Any] = {"name": "canvas", "mode": mode, "source": str(asset.id)}
    body: dict[str, Any] = {"model": model.model_id, "prompt": prompt}
    options = payload.get("options") if isinstance(payload.get("options"), dict) else {}
    if family != "native":
        body["stream"] = True
        body.update({name: str(options[name]) for name in PASSED_OPTIONS if options.get(name)})
    mask_png: bytes | None = None
    with Image.open(io.BytesIO(source.data)) as picture:
        picture.load()
        size = picture.size
        if mode == "inpaint":
            invert = bool(payload.get("invert"))
            mask_png = masks.vendor_mask(masks.painted_layer(payload.get("mask"), size), invert=invert)
            body["images"] = [image_source(source, user.id)]
            tool["inverted"] = invert
        elif mode == "outpaint":
            frame = _frame(payload, size)
            kind, fill = _background(user, payload)
            prepared = masks.outpaint(picture, frame, fill)
            mask_png = prepared.mask_png
            body["images"] = [{"image_url": data_uri(prepared.canvas_png)}]
            if prepared.backdrop_png is not None:
                body["background"] = data_uri(prepared.backdrop_png)
            raw_background = payload.get("background") if isinstance(payload.get("background"), dict) else {}
            tool.update({"frame": {"width": frame.width, "height": frame.height, "x": frame.x, "y": frame.y},
                         "background": {"kind": kind, "value": str(raw_background.get("value") or "")}})
        elif family != "native":
            body["images"] = [image_source(source, user.id)]
    return CanvasPlan(body=body, mask_png=mask_png, tool=tool, source=source, source_generation=asset.generation_id)


def store_mask(plan: CanvasPlan, principal: Principal, job_id: uuid.UUID) -> Asset:
    """The mask as its own file: never merged into the picture, kept with the job that used it."""
    return store_bytes(plan.mask_png or b"", "image/png", owner_id=principal.user_id, team_id=principal.team_id,
                       is_input=True, metadata={"role": "mask", "generation": str(job_id), **{
                           k: plan.tool[k] for k in ("mode", "source", "inverted") if k in plan.tool}})


def forget_asset(asset_id: uuid.UUID) -> None:
    Asset.objects.filter(id=asset_id).delete()


def build_tool_job(principal: Principal, model: ModelEntry, prompt: str, plan: CanvasPlan) -> StudioJob:
    if family_of(model) == "native":
        body = native_body(prompt, {}, [plan.source])
        return ToolNativeJob(principal, model.model_id, body, prompt, tool=plan.tool,
                             source_generation=plan.source_generation)
    return ToolImagesJob(principal, model.model_id, plan.body, prompt, tool=plan.tool,
                         source_generation=plan.source_generation)


async def start_job(job: StudioJob, extra: dict[str, Any] | None = None) -> JsonResponse:
    await job.prepare()
    launch_from_request(job)
    return JsonResponse({"job": str(job.id), "model": job.model_id, **(extra or {})}, status=201)


@login_required
@require_POST
async def canvas_edit(request: HttpRequest, asset_id: uuid.UUID) -> HttpResponse:
    """Start an inpaint, outpaint or whole-picture edit; answers the job id to follow."""
    user = await request.auser()
    mask_id: uuid.UUID | None = None
    try:
        payload = parse_body(request)
        prompt = prompt_of(payload)
        model = await edit_model(payload.get("model"))
        team_id = await sync_to_async(team_for_saving)(user.id, payload.get("team"))
        principal = Principal(user_id=user.id, team_id=team_id)
        plan = await sync_to_async(plan_canvas)(user, asset_id, model, payload, prompt)
        job = build_tool_job(principal, model, prompt, plan)
        extra: dict[str, Any] = {}
        if plan.mask_png is not None:
            mask = await sync_to_async(store_mask)(plan, principal, job.id)
            mask_id = mask.id
            plan.tool["mask"] = str(mask.id)
            job.body["mask"] = {"file_id": f"file-{mask.id}"}
            extra = {"mask": str(mask.id), "mask_url": reverse("asset-file", args=[mask.id])}
        return await start_job(job, extra)
    except Http404:
        return JsonResponse({"error": {"message": "no such image", "param": "asset"}}, status=404)
    except GatewayError as exc:
        if mask_id is not None:
            await sync_to_async(forget_asset)(mask_id)
        return error_json(exc)


def edit_models() -> list[dict[str, Any]]:
    """Models that edit images, with what the canvas offers for each (catalog capabilities)."""
    return [{**m, "mask": bool(m["capabilities"].get("mask")), "outpaint": bool(m["capabilities"].get("outpaint"))}
            for m in image_models() if m["family"] in ("native", "standard")]


def background_choices(user) -> list[dict[str, Any]]:
    rows = (access.visible_assets(user).filter(kind="image", is_input=False, is_draft=False)
            .order_by("-created")[:24])
    return [{"id": str(a.id), "thumb": reverse("asset-thumb", args=[a.id]), "url": reverse("asset-file", args=[a.id]),
             "width": a.width, "height": a.height} for a in rows]


@login_required
@require_GET
def canvas(request: HttpRequest, asset_id: uuid.UUID) -> HttpResponse:
    asset = access.visible_asset_or_404(request.user, asset_id)
    if asset.kind != "image":
        raise Http404("only images open on the canvas")
    models = edit_models()
    page_state = {
        "asset": {"id": str(asset.id), "url": reverse("asset-file", args=[asset.id]),
                  "width": asset.width, "height": asset.height},
        "submit_url": reverse("canvas-edit", args=[asset.id]),
        "backgrounds": background_choices(request.user),
        "teams": saving_teams(request.user),
        "initial_model": request.GET.get("model") or next((m["id"] for m in models if m["mask"]), None),
    }
    return render(request, "studio/canvas.html", {"asset": asset, "models": models, "page_state": page_state})


urlpatterns = [
    path("<uuid:asset_id>/", canvas, name="canvas"),
    path("<uuid:asset_id>/edit", canvas_edit, name="canvas-edit"),
]
