"""From a Generate form (one WebSocket message) to a prepared job, for any image model.

The model's family (catalog data) picks the job class and how the form becomes a request; one
registry, no ``if vendor``. In a compare run the shared options are filtered to what each model
offers, so one set of controls can drive several models.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from studio.core.entries import ModelEntry
from studio.core.errors import BadRequest, CapabilityMissing, NotFound
from studio.core.principal import Principal
from studio.gateway import snapshot
from studio.gateway.images.engine import family_of
from studio.gateway.jobs.base import StudioJob
from studio.gateway.jobs.images import ImagesJob, images_body
from studio.gateway.jobs.inputs import InputImage, check_limit
from studio.gateway.jobs.native import NativeJob, native_body
from studio.gateway.jobs.recipe import variation_seeds

MAX_PROMPT = 10000
# option → the capability that lists its allowed values (or just enables it), per family.
OFFERED_BY: dict[str, str] = {
    "aspect_ratio": "aspect_ratios", "image_size": "image_sizes", "size": "sizes", "quality": "qualities",
    "output_format": "output_formats", "background": "backgrounds", "n": "max_n",
    "partial_images": "max_partial_images", "seed": "seed", "sequential": "sequential",
    "max_images": "max_images", "layer_decomposition": "layer_decomposition", "watermark": "watermark",
    "optimize_prompt": "optimize_prompt_modes",
}


@dataclass(frozen=True, slots=True)
class JobKind:
    build: Callable[[Principal, ModelEntry, str, dict[str, Any], list[InputImage], str | None], StudioJob]


def _native(principal: Principal, model: ModelEntry, prompt: str, options: dict[str, Any],
            inputs: list[InputImage], compare: str | None) -> StudioJob:
    if model.capabilities.get("seed") and options.get("seed") in (None, ""):
        # A blank seed is a random one, chosen here and recorded, so "reuse prompt and seed" works.
        options = {**options, "seed": variation_seeds(1)[0]}
    return NativeJob(principal, model.model_id, native_body(prompt, options, inputs), prompt, compare)


def _images(principal: Principal, model: ModelEntry, prompt: str, options: dict[str, Any],
            inputs: list[InputImage], compare: str | None) -> StudioJob:
    body = images_body(model.model_id, family_of(model), prompt, options, inputs, principal.user_id)
    return ImagesJob(principal, model.model_id, body, prompt, compare)


JOB_KINDS: dict[str, JobKind] = {
    "native": JobKind(_native),
    "standard": JobKind(_images),
    "layered": JobKind(_images),
}


def offered_options(options: dict[str, Any], model: ModelEntry) -> dict[str, Any]:
    """Only the options this model offers, with values it accepts (compare runs share one form)."""
    kept: dict[str, Any] = {}
    for name, value in options.items():
        capability = model.capabilities.get(OFFERED_BY.get(name, ""))
        if not capability:
            continue
        if isinstance(capability, list) and value not in capability:
            continue
        kept[name] = value
    return kept


def _prompt(raw: Any, model: ModelEntry) -> str:
    prompt = str(raw or "").strip()
    layered = family_of(model) == "layered"
    if not prompt and not layered:
        raise BadRequest("Write a prompt first.", param="prompt")
    if len(prompt) > MAX_PROMPT:
        raise BadRequest(f"the prompt is too long ({len(prompt)} characters; at most {MAX_PROMPT})", param="prompt")
    return prompt


async def build_job(principal: Principal, model_id: str, prompt: Any, options: dict[str, Any],
                    inputs: list[InputImage], *, compare: str | None = None) -> StudioJob:
    """A validated, recorded job ready to launch; raises GatewayError naming the field otherwise."""
    snap = await snapshot.get()
    model = snap.models.get(model_id)
    kind = JOB_KINDS.get(family_of(model)) if model is not None else None
    if model is None:
        raise NotFound(f"the model '{model_id}' does not exist", param="model", code="model_not_found")
    if kind is None or model.kind not in ("native-image", "image"):
        raise CapabilityMissing(f"'{model_id}' is not an image model")
    if compare is not None:
        options = offered_options(options, model)
        inputs = inputs[: int(model.capabilities.get("max_reference_images") or 0)]
    check_limit(inputs, model.capabilities, model_id)
    job = kind.build(principal, model, _prompt(prompt, model), options, inputs, compare)
    await job.prepare()
    return job
