"""What a designer does next with a result: reuse its prompt and seed, make variations, upscale
it, or take its request as code. Everything here is read from the result's recorded generation and
the catalog; the jobs themselves run through the Generate page's socket like any other.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from studio.gateway.jobs.recipe import MAX_VARIATIONS, Recipe, recipe, variation_seeds
from studio.models import Asset, Generation, ModelKind, PlatformModel

__all__ = ["MAX_VARIATIONS", "Recipe", "Upscale", "recipe", "upscale_plan", "variation_seeds"]

# Resolution tiers of the native family, by their long side in pixels.
TIERS = {"512": 512, "1K": 1024, "2K": 2048, "4K": 4096}
UPSCALE_PROMPT = ("Upscale this image to a higher resolution. Keep the composition, colours and every detail "
                  "exactly as they are; add nothing new.")


@dataclass(frozen=True)
class Upscale:
    """How to upscale a picture, or why it cannot be: ``model`` is empty when no model can."""

    model: str = ""
    model_name: str = ""
    tier: str = ""
    prompt: str = UPSCALE_PROMPT
    message: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _next_tier(long_side: int, sizes: list[str]) -> str | None:
    larger = [t for t in sizes if t in TIERS and TIERS[t] > long_side * 1.2]
    return min(larger, key=lambda t: TIERS[t]) if larger else None


def upscale_plan(asset: Asset, generation: Generation | None) -> Upscale:
    """A model that can re-render this picture larger from the picture itself, or why none can.

    The result's own model is preferred when it offers a larger tier and takes a reference image;
    otherwise the catalog's image model with the largest tier."""
    if asset.kind != "image" or not asset.width or not asset.height:
        return Upscale(message="Only images can be upscaled.")
    long_side = max(asset.width, asset.height)
    candidates = []
    for model in PlatformModel.objects.filter(kind=ModelKind.NATIVE_IMAGE, enabled=True).order_by("model_id"):
        caps = model.capabilities or {}
        if int(caps.get("max_reference_images") or 0) < 1:
            continue
        tier = _next_tier(long_side, list(caps.get("image_sizes") or []))
        if tier:
            candidates.append((model.model_id == (generation.model_id if generation else ""), TIERS[tier], tier, model))
    if not candidates:
        return Upscale(message=f"No model in the catalog can make this {asset.width} × {asset.height} image larger: "
                               "it is already at the largest size the image models make.")
    candidates.sort(key=lambda c: (not c[0], -c[1]))
    _, _, tier, model = candidates[0]
    return Upscale(model=model.model_id, model_name=model.display_name or model.model_id, tier=tier)
