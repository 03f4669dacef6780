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
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_GET

from studio.gateway import permissions as access
from studio.models import Asset, Generation
from studio.web import layer_export
from studio.web.layer_export import GROUP_ORDER, GROUP_TITLES, StackLayer


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
    group: str = "subjects"

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
        z_index = int(asset.metadata.get("z_index", asset.index))
        name = asset.metadata.get("name") or f"Layer {asset.index}"
        description = asset.metadata.get("description") or ""
        full_frame = (x2 - x1) >= 0.9 * width and (y2 - y1) >= 0.9 * height
        layers.append(LayerView(
            asset, z_index, name, description, box,
            left=100 * x1 / width, top=100 * y1 / height, width=100 * (x2 - x1) / width, height=100 * (y2 - y1) / height,
            group=layer_export.group_of(name, description, z_index, full_frame),
        ))
    layers.sort(key=lambda layer: (GROUP_ORDER.index(layer.group), layer.z_index))
    return base, layers


def groups_top_down(layers: list[LayerView]) -> list[dict[str, Any]]:
    """The layer panel's sections, top of the stack first (text, subjects, background)."""
    return [{"key": key, "title": GROUP_TITLES[key],
             "layers": [layer for layer in reversed(layers) if layer.group == key]}
            for key in reversed(GROUP_ORDER) if any(layer.group == key for layer in layers)]


def _stack(base: LayerView, layers: list[LayerView]) -> list[StackLayer]:
    width, height = base.asset.width or 1, base.asset.height or 1
    return [StackLayer(layer.asset, layer.z_index, layer.name, layer.description,
                       layer.box or (0, 0, width, height), layer.group) for layer in layers]


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
        "groups": groups_top_down(layers), "errors": item_errors(generation),
        "billed": (generation.usage or {}).get("generated_images"),
    })


def _export(request: HttpRequest, asset_id: uuid.UUID) -> tuple[Generation, LayerView, list[StackLayer]]:
    asset, generation, outputs = _grouped(request, asset_id, "layers")
    base, layers = stack_layers(outputs)
    if base is None:
        raise Http404("this decomposition has no layers")
    return generation, base, _stack(base, layers)


def _attachment(data: bytes, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(data, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["Cache-Control"] = "private, no-store"
    return response


@login_required
@require_GET
def layers_psd(request: HttpRequest, asset_id: uuid.UUID) -> HttpResponse:
    """The stack as a layered Photoshop file."""
    generation, base, stack = _export(request, asset_id)
    try:
        data = layer_export.build_psd(base.asset, stack)
    except ValueError as exc:
        return JsonResponse({"error": {"message": str(exc), "param": "asset"}}, status=422)
    return _attachment(data, "image/vnd.adobe.photoshop", f"layers-{generation.id.hex[:8]}.psd")


@login_required
@require_GET
def layers_zip(request: HttpRequest, asset_id: uuid.UUID) -> HttpResponse:
    """The stack as PNGs with a manifest of their boxes."""
    generation, base, stack = _export(request, asset_id)
    data = layer_export.build_zip(base.asset, stack, generation.prompt, generation.model_id)
    return _attachment(data, "application/zip", f"layers-{generation.id.hex[:8]}.zip")


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
    path("<uuid:asset_id>/layers.psd", layers_psd, name="asset-layers-psd"),
    path("<uuid:asset_id>/layers.zip", layers_zip, name="asset-layers-zip"),
    path("<uuid:asset_id>/set", set_view, name="asset-set"),
]
