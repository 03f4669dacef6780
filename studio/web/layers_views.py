"""Grouped results of one generation: a layer decomposition (stacked layers over the base image,
each with its bounding box) and a sequential set (one ordered strip).

Both pages start from any output of the generation; only outputs the user may see are shown,
and an asset the user may not see is a 404 like everywhere else.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_GET

from studio.models import Asset, Generation

from . import access


@dataclass(frozen=True)
class LayerView:
    """One layer as the page draws it: position and size as percentages of the base image."""

    asset: Asset
    z_index: int
    name: str
    description: str
    box: tuple[int, int, int, int] | None  # absolute pixels on the base image (x1, y1, x2, y2)
    left: float = 0.0
    top: float = 0.0
    width: float = 100.0
    height: float = 100.0

    @property
    def file_url(self) -> str:
        return reverse("asset-file", args=[self.asset.id])


def group_kind(generation: Generation | None) -> str | None:
    """"layers", "set" or None: which grouped view a generation's outputs have."""
    if generation is None:
        return None
    params = generation.parameters or {}
    if params.get("layer_decomposition"):
        return "layers"
    if params.get("sequential_image_generation") == "auto":
        return "set"
    return None


def outputs_of(user, generation: Generation, roles: dict[int, str]) -> list[Asset]:
    return list(access.visible_assets(user, roles)
                .filter(generation=generation, is_input=False, is_draft=False).order_by("index"))


def _box(metadata: dict[str, Any]) -> tuple[int, int, int, int] | None:
    box = (metadata.get("bounding_box") or {}).get("absolute")
    if isinstance(box, list) and len(box) == 4 and all(isinstance(v, int | float) for v in box):
        x1, y1, x2, y2 = (int(v) for v in box)
        if x2 > x1 and y2 > y1:
            return x1, y1, x2, y2
    return None


def stack_layers(assets: list[Asset]) -> tuple[LayerView | None, list[LayerView]]:
    """The base layer (z_index 0, the whole picture) and the others bottom to top, placed on it.

    A layer's file is cropped to its bounding box, so the box is also where its pixels go.
    """
    ordered = sorted(assets, key=lambda a: (a.metadata.get("z_index", a.index), a.index))
    base_asset = next((a for a in ordered if a.metadata.get("z_index") == 0), ordered[0] if ordered else None)
    if base_asset is None:
        return None, []
    width, height = base_asset.width or 1, base_asset.height or 1
    base = LayerView(base_asset, 0, base_asset.metadata.get("name") or "Base image",
                     base_asset.metadata.get("description") or "", None)
    layers = []
    for asset in ordered:
        if asset.id == base_asset.id:
            continue
        box = _box(asset.metadata)
        x1, y1, x2, y2 = box or (0, 0, width, height)
        layers.append(LayerView(
            asset, int(asset.metadata.get("z_index", asset.index)), asset.metadata.get("name") or f"Layer {asset.index}",
            asset.metadata.get("description") or "", box,
            left=100 * x1 / width, top=100 * y1 / height, width=100 * (x2 - x1) / width, height=100 * (y2 - y1) / height,
        ))
    return base, layers


def item_errors(generation: Generation) -> list[dict[str, Any]]:
    """Per-item failures of a group (e.g. images past a set's cap), as the upstream explained them."""
    errors = (generation.parameters or {}).get("item_errors") or []
    return [e for e in errors if isinstance(e, dict)]


def _grouped(request: HttpRequest, asset_id: uuid.UUID, kind: str) -> tuple[Asset, Generation, list[Asset]]:
    roles = access.roles_of(request.user)
    asset = access.visible_asset_or_404(request.user, asset_id, roles)
    generation = asset.generation
    if generation is None or group_kind(generation) != kind:
        raise Http404("this asset is not part of such a group")
    return asset, generation, outputs_of(request.user, generation, roles)


@login_required
@require_GET
def layers_view(request: HttpRequest, asset_id: uuid.UUID) -> HttpResponse:
    asset, generation, outputs = _grouped(request, asset_id, "layers")
    base, layers = stack_layers(outputs)
    return render(request, "studio/layers.html", {
        "asset": asset, "generation": generation, "base": base, "layers": layers,
        "errors": item_errors(generation),
    })


@login_required
@require_GET
def set_view(request: HttpRequest, asset_id: uuid.UUID) -> HttpResponse:
    asset, generation, outputs = _grouped(request, asset_id, "set")
    if not outputs:
        return redirect("asset-detail", asset_id=asset.id)
    current = next((i for i, a in enumerate(outputs) if a.id == asset.id), 0)
    return render(request, "studio/set_strip.html", {
        "asset": asset, "generation": generation, "frames": outputs, "current": current,
        "errors": item_errors(generation),
    })


urlpatterns = [
    path("<uuid:asset_id>/layers", layers_view, name="asset-layers"),
    path("<uuid:asset_id>/set", set_view, name="asset-set"),
]
