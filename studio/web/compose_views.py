"""Compose: several gallery images, each given a role in words, made into one picture.

On a native model this is a multi-reference native request (each image preceded by a text part
saying what to take from it, then the instruction); on a standard images model it is an edit with
several images, the roles written into the prompt. Both run as studio jobs through the same
engines as /v1, and the row keeps which image played which role.
"""

from __future__ import annotations

import uuid
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path, reverse
from django.views.decorators.http import require_GET, require_POST

from studio.core.entries import ModelEntry
from studio.core.errors import BadRequest, GatewayError, NotFound
from studio.core.principal import Principal
from studio.gateway import permissions as access
from studio.gateway import snapshot
from studio.gateway.images.engine import family_of
from studio.gateway.jobs.access import team_for_saving
from studio.gateway.jobs.base import StudioJob
from studio.gateway.jobs.canvas import ToolImagesJob, ToolNativeJob
from studio.gateway.jobs.inputs import InputImage
from studio.web.canvas_views import (
    error_json,
    image_source,
    input_image,
    parse_body,
    start_job,
    visible_image,
)
from studio.web.generate_views import image_models, saving_teams

MIN_IMAGES = 2
MAX_ROLE = 500
MAX_PROMPT = 10000
PICKER_SIZE = 48


async def compose_model(model_id: Any) -> ModelEntry:
    snap = await snapshot.get()
    model = snap.models.get(str(model_id or ""))
    if model is None or family_of(model) not in ("native", "standard") or "images.edits" not in model.routes:
        raise NotFound(f"'{model_id}' is not a model that composes images", param="model")
    return model


def parse_items(raw: Any, limit: int, model_id: str) -> list[tuple[str, str]]:
    """[(asset id, role)] in order; every image needs its role in words."""
    if not isinstance(raw, list) or len(raw) < MIN_IMAGES:
        raise BadRequest(f"choose at least {MIN_IMAGES} images to compose", param="items")
    if len(raw) > limit:
        raise BadRequest(f"model '{model_id}' takes at most {limit} images; {len(raw)} were chosen", param="items")
    items = []
    for index, entry in enumerate(raw):
        entry = entry if isinstance(entry, dict) else {}
        role = str(entry.get("role") or "").strip()
        if not role:
            raise BadRequest(f"say what to take from image {index + 1}", param=f"items[{index}].role")
        if len(role) > MAX_ROLE:
            raise BadRequest(f"the role of image {index + 1} is too long (at most {MAX_ROLE} characters)",
                             param=f"items[{index}].role")
        items.append((str(entry.get("asset") or ""), role))
    return items


def role_text(index: int, role: str) -> str:
    return f"Image {index + 1}: {role}"


def native_compose_body(prompt: str, images: list[InputImage], roles: list[str]) -> dict[str, Any]:
    """Each image after a text part naming its role, then the instruction (one user turn)."""
    parts: list[dict[str, Any]] = []
    for index, (image, role) in enumerate(zip(images, roles, strict=True)):
        parts.append({"text": role_text(index, role)})
        parts.append({"inlineData": {"mimeType": image.mime, "data": image.b64()}})
    parts.append({"text": prompt})
    return {"contents": [{"role": "user", "parts": parts}],
            "generationConfig": {"responseModalities": ["TEXT", "IMAGE"]}}


def standard_prompt(prompt: str, roles: list[str]) -> str:
    return "\n".join([*(role_text(i, role) + "." for i, role in enumerate(roles)), prompt])


def load_items(user, items: list[tuple[str, str]]) -> tuple[list[InputImage], list[uuid.UUID | None]]:
    images, generations = [], []
    for index, (asset_id, _role) in enumerate(items):
        asset = visible_image(user, asset_id, f"items[{index}].asset")
        images.append(input_image(asset))
        generations.append(asset.generation_id)
    return images, generations


def build_compose_job(principal: Principal, model: ModelEntry, prompt: str, images: list[InputImage],
                      roles: list[str], source_generation: uuid.UUID | None) -> StudioJob:
    tool = {"name": "compose", "inputs": [{"asset": str(image.asset_id), "role": role}
                                          for image, role in zip(images, roles, strict=True)]}
    if family_of(model) == "native":
        return ToolNativeJob(principal, model.model_id, native_compose_body(prompt, images, roles), prompt,
                             tool=tool, source_generation=source_generation)
    full_prompt = standard_prompt(prompt, roles)
    body = {"model": model.model_id, "prompt": full_prompt, "stream": True,
            "images": [image_source(image, principal.user_id) for image in images]}
    return ToolImagesJob(principal, model.model_id, body, full_prompt, tool=tool, source_generation=source_generation)


@login_required
@require_POST
async def compose_start(request: HttpRequest) -> HttpResponse:
    user = await request.auser()
    try:
        payload = parse_body(request)
        prompt = str(payload.get("prompt") or "").strip()
        if not prompt:
            raise BadRequest("Describe the picture to make from them.", param="prompt")
        if len(prompt) > MAX_PROMPT:
            raise BadRequest(f"the prompt is too long (at most {MAX_PROMPT} characters)", param="prompt")
        model = await compose_model(payload.get("model"))
        limit = int(model.capabilities.get("max_reference_images") or 1)
        items = parse_items(payload.get("items"), limit, model.model_id)
        team_id = await sync_to_async(team_for_saving)(user.id, payload.get("team"))
        images, generations = await sync_to_async(load_items)(user, items)
        principal = Principal(user_id=user.id, team_id=team_id)
        first_parent = next((g for g in generations if g is not None), None)
        job = build_compose_job(principal, model, prompt, images, [role for _a, role in items], first_parent)
        return await start_job(job)
    except GatewayError as exc:
        return error_json(exc)


def compose_models() -> list[dict[str, Any]]:
    return [{"id": m["id"], "name": m["name"], "family": m["family"],
             "max_images": int(m["capabilities"].get("max_reference_images") or 1)}
            for m in image_models() if m["family"] in ("native", "standard")]


@login_required
@require_GET
def compose(request: HttpRequest) -> HttpResponse:
    rows = (access.visible_assets(request.user).filter(kind="image", is_input=False, is_draft=False)
            .select_related("generation").order_by("-created")[:PICKER_SIZE])
    choices = [{"id": str(a.id), "thumb": reverse("asset-thumb", args=[a.id]),
                "prompt": (a.generation.prompt if a.generation else "")[:120]} for a in rows]
    preselected = [c["id"] for c in choices if c["id"] in set(request.GET.getlist("input"))]
    state = {"choices": choices, "preselected": preselected, "start_url": reverse("compose-start"),
             "teams": saving_teams(request.user)}
    return render(request, "studio/compose.html", {"models": compose_models(), "page_state": state})


urlpatterns = [
    path("", compose, name="compose"),
    path("start", compose_start, name="compose-start"),
]
