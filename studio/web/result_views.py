"""A result's next steps as data for the pages: its recipe (reuse prompt and seed), the upscale
plan, and its request as code. The Generate page asks for these when a result arrives; the
detail page renders the same data.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, JsonResponse
from django.urls import path, reverse
from django.views.decorators.http import require_GET

from studio.gateway import permissions as access
from studio.models import ApiKey, Asset, ModelKind, PlatformModel
from studio.web import code_snippets, result_actions


def key_label(user) -> str:
    """Which of the user's keys a snippet should use: the one used last, by name and prefix."""
    keys = [k for k in ApiKey.objects.filter(owner=user, revoked=False).order_by("-last_used_at", "-created")[:10]
            if k.is_active]
    return f'"{keys[0].name}" ({keys[0].prefix}…)' if keys else ""


def family(model_id: str) -> str:
    model = PlatformModel.objects.filter(model_id=model_id).only("kind", "capabilities").first()
    if model is None:
        return "native"
    return (model.capabilities or {}).get("family") or ("native" if model.kind == ModelKind.NATIVE_IMAGE else "standard")


def actions_for(user, asset: Asset) -> dict[str, Any]:
    """Everything the result actions need, for one asset the user may see."""
    generation = asset.generation
    data: dict[str, Any] = {
        "asset": str(asset.id), "kind": asset.kind, "mime": asset.mime,
        "file_url": reverse("asset-file", args=[asset.id]),
        "download_url": reverse("asset-file", args=[asset.id]) + "?download=1",
        "detail_url": reverse("asset-detail", args=[asset.id]),
        "upscale": result_actions.upscale_plan(asset, generation).as_dict(),
        "recipe": None, "code": None, "key_label": key_label(user), "starred": asset.starred,
    }
    if generation is not None and generation.model_id:
        recipe = result_actions.recipe(generation)
        data["recipe"] = recipe.as_dict()
        data["code"] = code_snippets.snippets(recipe, family(recipe.model), settings.PUBLIC_BASE_URL,
                                              data["key_label"])
    return data


@login_required
@require_GET
def result_actions_view(request: HttpRequest, asset_id: uuid.UUID) -> JsonResponse:
    asset = access.visible_asset_or_404(request.user, asset_id)
    return JsonResponse(actions_for(request.user, asset))


urlpatterns = [
    path("<uuid:asset_id>/actions", result_actions_view, name="asset-actions"),
]
