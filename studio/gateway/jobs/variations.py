"""Variations of a result: the same prompt and settings on the same model, each with a fresh seed
(models that take no seed get the result itself as their reference instead). They run as one
group of ordinary studio jobs, like a compare run, so the page shows them side by side.

Socket message: ``variations`` {ref, asset, count (1 to 4; default 4)}.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from channels.db import database_sync_to_async

from studio.core.errors import BadRequest, GatewayError, NotFound
from studio.core.principal import Principal
from studio.gateway.jobs.factory import build_job
from studio.gateway.jobs.inputs import InputImage, load_inputs
from studio.gateway.jobs.recipe import MAX_VARIATIONS, Recipe, recipe, variation_seeds
from studio.gateway.live import rejection


@dataclass(frozen=True)
class VariationPlan:
    recipe: Recipe
    seeds: list[int | None]
    inputs: list[InputImage]


def plan_variations(user, raw_asset: Any, raw_count: Any) -> VariationPlan:
    """What to run (sync: queries and file reads); raises GatewayError naming the field."""
    from studio.gateway.permissions import can_view
    from studio.models import Asset, PlatformModel

    try:
        count = int(raw_count if raw_count not in (None, "") else MAX_VARIATIONS)
    except (TypeError, ValueError):
        raise BadRequest("'count' must be a whole number", param="count") from None
    if not 1 <= count <= MAX_VARIATIONS:
        raise BadRequest(f"'count' must be between 1 and {MAX_VARIATIONS}", param="count")
    try:
        asset_id = uuid.UUID(str(raw_asset))
    except ValueError:
        raise NotFound("no such image", param="asset") from None
    asset = Asset.objects.select_related("generation").filter(id=asset_id, kind="image").first()
    if asset is None or not can_view(user, asset) or asset.generation is None or not asset.generation.model_id:
        raise NotFound("no such generated image", param="asset")
    base = recipe(asset.generation)
    model = PlatformModel.objects.filter(model_id=base.model, enabled=True).first()
    if model is None:
        raise NotFound(f"the model {base.model} is no longer available", param="asset")
    caps = model.capabilities or {}
    if caps.get("seed"):
        return VariationPlan(base, list(variation_seeds(count)), [])
    inputs = load_inputs(user, [asset.id]) if int(caps.get("max_reference_images") or 0) > 0 else []
    return VariationPlan(base, [None] * count, inputs)


async def start_variations(consumer, content: dict[str, Any]) -> None:
    """The socket's ``variations`` action: start one job per variation, or say why not."""
    ref = content.get("ref")
    try:
        plan = await database_sync_to_async(plan_variations)(consumer.user, content.get("asset"), content.get("count"))
    except GatewayError as exc:
        await consumer.send_json(rejection(ref, exc))
        return
    run = str(uuid.uuid4())
    await consumer.send_json({"type": "compare.accepted", "ref": ref,
                              "data": {"compare": run, "variations": len(plan.seeds), "asset": str(content.get("asset"))}})
    principal = Principal(user_id=consumer.user_id)
    for seed in plan.seeds:
        options = dict(plan.recipe.options)
        if seed is not None:
            options["seed"] = seed
        try:
            job = await build_job(principal, plan.recipe.model, plan.recipe.prompt, options, plan.inputs, compare=run)
        except GatewayError as exc:
            await consumer.send_json(rejection(ref, exc, plan.recipe.model))
            return
        await consumer._start(job, ref)
