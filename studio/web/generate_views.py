"""The Generate page (every image model; one model or several to compare) and its reference-image
upload. Jobs themselves run over the page's WebSocket (``studio.realtime``), through the same
engines as /v1.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from studio.core.errors import BadRequest
from studio.gateway.images.inputs import image_from_bytes
from studio.gateway.media.storage import store_bytes
from studio.models import Asset, Membership, ModelKind, PlatformModel
from studio.models.accounts import Role
from studio.web import result_actions
from studio.web.price_sheet import price_sheet

IMAGE_KINDS = (ModelKind.NATIVE_IMAGE, ModelKind.IMAGE)
MAX_UPLOAD_BYTES = 20 * 1024 * 1024
MAX_PREFILLED_INPUTS = 16
MAX_COMPARE = 4


def abilities(caps: dict[str, Any]) -> list[str]:
    """What a model can do, in a designer's words, for the model picker."""
    found = ["text to image"]
    if int(caps.get("max_reference_images") or 0):
        found.append(f"up to {caps['max_reference_images']} reference images")
    if caps.get("edits") or caps.get("image_to_image") or "edit" in (caps.get("modes") or []):
        found.append("edits")
    if caps.get("mask"):
        found.append("inpaint with a mask")
    if caps.get("sequential"):
        found.append("sets")
    if caps.get("layer_decomposition"):
        found.append("layers")
    sizes = caps.get("image_sizes") or caps.get("sizes") or []
    if sizes:
        found.append("sizes " + ", ".join(s for s in sizes if s != "auto"))
    if caps.get("backgrounds") and "transparent" in caps["backgrounds"]:
        found.append("transparent background")
    if caps.get("seed"):
        found.append("seed")
    if int(caps.get("max_partial_images") or 0):
        found.append("live previews")
    return found


def image_models() -> list[dict[str, Any]]:
    """Every enabled image model with what the form needs: its family, capabilities, what it can
    do and its price."""
    rows = PlatformModel.objects.filter(kind__in=IMAGE_KINDS, enabled=True).order_by("kind", "model_id")
    return [{
        "id": m.model_id, "name": m.display_name or m.model_id,
        "family": m.capabilities.get("family") or ("native" if m.kind == ModelKind.NATIVE_IMAGE else "standard"),
        "capabilities": m.capabilities, "abilities": abilities(m.capabilities),
        "price": price_sheet(m.model_id),
    } for m in rows]


def _visible_generated(user, raw: str | None) -> Asset | None:
    """``?recipe=``, ``?variations=``, ``?upscale=``: a generated image the user may see."""
    from studio.gateway.permissions import can_view

    try:
        asset_id = uuid.UUID(str(raw))
    except ValueError:
        return None
    asset = Asset.objects.select_related("generation").filter(id=asset_id, kind="image").first()
    return asset if asset is not None and can_view(user, asset) else None


def start_actions(user, query) -> dict[str, Any]:
    """What the page does on load for links from a result: fill the form from a recipe, run
    variations, or upscale."""
    found: dict[str, Any] = {}
    source = _visible_generated(user, query.get("recipe"))
    if source is not None and source.generation is not None:
        found["recipe"] = result_actions.recipe(source.generation).as_dict()
    for action in ("variations", "upscale"):
        asset = _visible_generated(user, query.get(action))
        if asset is not None:
            found[action] = str(asset.id)
    return found


def input_entry(asset: Asset) -> dict[str, Any]:
    return {"id": str(asset.id), "url": reverse("asset-file", args=[asset.id]),
            "width": asset.width, "height": asset.height}


def prefilled_inputs(user, raw_ids: list[str]) -> list[dict[str, Any]]:
    """``?input=<asset id>`` (the gallery's "use as input"): the images the user may see, in order."""
    from studio.gateway.permissions import can_view

    ids = []
    for raw in raw_ids[:MAX_PREFILLED_INPUTS]:
        try:
            ids.append(uuid.UUID(raw))
        except ValueError:
            continue
    found = {a.id: a for a in Asset.objects.filter(id__in=ids, kind="image")}
    return [input_entry(found[i]) for i in ids if i in found and can_view(user, found[i])]


def job_ids(raw_ids: list[str]) -> list[str]:
    """``?job=<id>`` (repeated for a compare run): the page replays and follows these over its
    socket, which checks that the user may see each one."""
    ids = []
    for raw in raw_ids[:MAX_COMPARE]:
        try:
            ids.append(str(uuid.UUID(raw)))
        except ValueError:
            continue
    return list(dict.fromkeys(ids))


def saving_teams(user) -> list[dict[str, Any]]:
    """Teams the user may add images to (member role or above)."""
    memberships = Membership.objects.filter(user=user).select_related("team").order_by("team__name")
    return [{"id": m.team_id, "name": m.team.name} for m in memberships if m.has_role(Role.MEMBER)]


@login_required
def generate(request: HttpRequest) -> HttpResponse:
    models = image_models()
    known = {m["id"] for m in models}
    compare = [m for m in request.GET.getlist("compare") if m in known]
    context = {
        "models": models,
        "initial_model": request.GET.get("model") if request.GET.get("model") in known else None,
        "initial_prompt": request.GET.get("prompt", "")[:10000],
        "page_state": {
            "inputs": prefilled_inputs(request.user, request.GET.getlist("input")),
            "jobs": job_ids(request.GET.getlist("job")),
            "compare": compare,
            "teams": saving_teams(request.user),
            "upload_url": reverse("generate-upload"),
            **start_actions(request.user, request.GET),
        },
    }
    return render(request, "studio/generate.html", context)


@login_required
@require_POST
def upload_input(request: HttpRequest) -> JsonResponse:
    """Store an uploaded reference image as the user's input asset; answers its id and URL."""
    upload = request.FILES.get("file")
    if upload is None:
        return JsonResponse({"error": {"message": "choose an image file", "param": "file"}}, status=400)
    if upload.size and upload.size > MAX_UPLOAD_BYTES:
        return JsonResponse({"error": {"message": "the image is larger than 20 MB", "param": "file"}}, status=400)
    data = upload.read()
    try:
        image = image_from_bytes(data, "file")
    except BadRequest as exc:
        return JsonResponse({"error": {"message": exc.message, "param": exc.param}}, status=400)
    asset = store_bytes(data, image.mime, owner_id=request.user.id, is_input=True, dedupe=True,
                        metadata={"filename": (upload.name or "")[:200]})
    return JsonResponse(input_entry(asset), status=201)
