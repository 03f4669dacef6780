"""The images engine: validate, resolve inputs, route with failover, translate, record.

Used by ``POST /v1/images/generations`` and ``/v1/images/edits``. The model's catalog entry
decides the family (standard, layered extension, or native by translation) and therefore the
rules and the response shape; each upstream's provider implements the images contract
(``ImagesUpstream``: natively, or by translating onto its own protocol).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from studio.core.entries import ModelEntry, UpstreamEntry
from studio.core.errors import SHAPE_ERRORS, BadRequest, GatewayError, unreadable
from studio.core.images import EDITS, GENERATIONS, ImageEvent, ImageJob, ImageResult, SourceImage
from studio.core.principal import Principal
from studio.gateway import admission, image_tokens, routing, snapshot
from studio.gateway.auth import resolve_model
from studio.gateway.cost import Usage
from studio.gateway.images import inputs as images_inputs
from studio.gateway.images import rules as images_rules
from studio.gateway.images.admitted import AdmittedJob
from studio.gateway.images.record import ImagesRecord, readable_usage
from studio.gateway.text_checks import refuse_nul
from studio.providers.contracts import Capability
from studio.providers.registry import capable, images_upstream

BACKGROUND_MODES = ("transparent", "opaque", "auto")
SOURCE_FIELDS = {"images", "image", "mask"}
Uploads = dict[str, list[tuple[bytes, str]]]  # form field → [(bytes, filename)]


def family_of(model: ModelEntry) -> str:
    return model.capabilities.get("family") or ("native" if model.kind == "native-image" else "standard")


async def _model(principal: Principal, fields: dict[str, Any], route: str) -> ModelEntry:
    model_id = fields.get("model")
    if not isinstance(model_id, str) or not model_id:
        raise BadRequest("'model' is required", param="model", code="missing_required_parameter")
    snap = await snapshot.get()
    model = resolve_model(snap, principal, model_id, route,
                          use="image editing" if route == EDITS else "image generation")
    capable(snap.upstreams_for.get(model.model_id, ()), model, Capability.IMAGES)  # a 400 before any work
    return model


def _check_count(images: list[SourceImage], model: ModelEntry, field: str) -> None:
    limit = int(model.capabilities.get("max_reference_images") or 1)
    if len(images) > limit:
        raise BadRequest(f"too many images: {len(images)}; model '{model.model_id}' takes at most {limit}",
                         param=field, code="too_many_images")


async def prepare_generation(principal: Principal, body: dict[str, Any]) -> AdmittedJob:
    refuse_nul(body)
    model = await _model(principal, body, GENERATIONS)
    family = family_of(model)
    layers = bool(body.get("layer_decomposition"))
    prompt = images_rules.validate(body, model, family, prompt_required=not layers)
    fields = {k: v for k, v in body.items() if k not in SOURCE_FIELDS}
    job = AdmittedJob(route=GENERATIONS, model=model, family=family, fields=fields, prompt=prompt)
    raw = body.get("image")
    if raw is not None:
        if not model.capabilities.get("image_to_image"):
            raise BadRequest(f"'image' is not supported on generations by model '{model.model_id}'; "
                             "use /v1/images/edits", param="image", code="unsupported_parameter")
        sources = raw if isinstance(raw, list) else [raw]
        job.image_as_list = isinstance(raw, list)
        job.images = [await images_inputs.resolve(value, f"image[{i}]" if job.image_as_list else "image", principal)
                      for i, value in enumerate(sources)]
        _check_count(job.images, model, "image")
    if layers and len(job.images) > 1:
        raise BadRequest("layer decomposition takes one image", param="image", code="too_many_images")
    return await _admit(principal, job)


async def _admit(principal: Principal, job: AdmittedJob) -> AdmittedJob:
    """Limits and budgets, once the request is known valid: reserve the images it may make."""
    # The vendors bill the pictures as output tokens too: reserved like a chat's, against a
    # tokens-per-minute limit and, at a per-token price, a budget.
    estimate = Usage(input_tokens=image_tokens.prompt_tokens(len(job.prompt.encode())),
                     output_tokens=image_tokens.per_image(job) * job.count, images=[(job.size, job.quality)] * job.count)
    job.ticket = await admission.admit(principal, job.model, estimate, images=job.count,
                                       tokens=estimate.input_tokens + estimate.output_tokens)
    return job


async def prepare_edit(principal: Principal, body: dict[str, Any], uploads: Uploads | None = None) -> AdmittedJob:
    """An edit from a JSON body (``images[]``, ``mask``, ``background``) or multipart fields and files."""
    uploads = uploads or {}
    refuse_nul(body)
    model = await _model(principal, body, EDITS)
    family = family_of(model)
    background = body.get("background")
    backdrop_source = uploads.get("background") or (
        background if background is not None and background not in BACKGROUND_MODES else None)
    fields = {k: v for k, v in body.items() if k not in SOURCE_FIELDS}
    if backdrop_source is not None:
        fields.pop("background", None)
    prompt = images_rules.validate(fields, model, family, prompt_required=True)
    job = AdmittedJob(route=EDITS, model=model, family=family, fields=fields, prompt=prompt)

    for key in ("image", "image[]"):
        for i, (data, _name) in enumerate(uploads.get(key, [])):
            job.images.append(images_inputs.image_from_bytes(data, key if key == "image" else f"image[{i}]"))
    sources = body.get("images")
    if sources is not None:
        if not isinstance(sources, list):
            raise BadRequest("'images' must be an array of {image_url} or {file_id} objects", param="images",
                             code="invalid_type")
        for i, value in enumerate(sources):
            job.images.append(await images_inputs.resolve(value, f"images[{i}]", principal))
    if not job.images:
        raise BadRequest("at least one image is required ('images' or 'image')", param="images" if not uploads
                         else "image", code="missing_required_parameter")
    _check_count(job.images, model, "images")

    mask_upload = uploads.get("mask")
    mask_source = body.get("mask")
    if mask_upload or mask_source is not None:
        if not model.capabilities.get("mask"):
            raise BadRequest(f"'mask' is not supported by model '{model.model_id}'", param="mask",
                             code="unsupported_parameter")
        job.mask = (images_inputs.image_from_bytes(mask_upload[0][0], "mask") if mask_upload
                    else await images_inputs.resolve(mask_source, "mask", principal))
        images_inputs.check_mask(job.images[0], job.mask)
    if backdrop_source is not None:
        if not model.capabilities.get("outpaint"):
            raise BadRequest(f"a background image (outpainting) is not supported by model '{model.model_id}'",
                             param="background", code="unsupported_parameter")
        job.backdrop = (images_inputs.image_from_bytes(backdrop_source[0][0], "background")
                        if isinstance(backdrop_source, list)
                        else await images_inputs.resolve(backdrop_source, "background", principal))
    return await _admit(principal, job)


async def _upstreams(job: ImageJob) -> list[UpstreamEntry]:
    """The model's upstreams that can serve the images API (a 400 if none can)."""
    return capable(routing.candidates(await snapshot.get(), job.model.model_id), job.model, Capability.IMAGES)


async def run(principal: Principal, job: AdmittedJob) -> tuple[ImageResult, ImagesRecord]:
    """A buffered call with failover; the record is submitted before returning."""
    record = ImagesRecord(principal=principal, job=job)

    async def attempt(up: UpstreamEntry) -> ImageResult:
        try:
            return await images_upstream(up, job.model).images_run(job, up.upstream_model(job.model.model_id))
        except SHAPE_ERRORS as exc:  # an answer not of its protocol's shape
            raise unreadable(exc) from exc

    try:
        upstream, result = await routing.with_failover(await _upstreams(job), attempt)
        record.upstream_id = upstream.id
        record.first_chunk()
        record.usage = readable_usage(result.usage)
    except GatewayError as exc:
        record.fail(exc)
        raise
    record.items = list(result.items)
    record.resolved = result.echo
    record.finish()
    return result, record


async def stream(principal: Principal, job: AdmittedJob, record: ImagesRecord) -> AsyncIterator[ImageEvent]:
    """Events with failover before the first one; every finished item lands in the record."""
    def open_stream(up: UpstreamEntry) -> AsyncIterator[ImageEvent]:
        return images_upstream(up, job.model).images_stream(job, up.upstream_model(job.model.model_id))

    def chosen(up: UpstreamEntry) -> None:
        record.upstream_id = up.id

    try:
        upstreams = await _upstreams(job)
        async with contextlib.aclosing(routing.stream_with_failover(upstreams, open_stream, chosen)) as relayed:
            async for event in relayed:
                record.first_chunk()
                if event.kind == "item" and event.item is not None:
                    record.items.append(event.item)
                    record.resolved = event.echo or record.resolved
                elif event.kind == "completed":
                    record.usage = readable_usage(event.usage)
                    if job.ticket is not None:  # the final event carries what the call costs
                        event = replace(event, cost_usd=job.ticket.quote(record.counted(), record.upstream_id))
                yield event
    except GatewayError as exc:
        record.fail(exc)
        raise
    except SHAPE_ERRORS as exc:  # an event not of its protocol's shape
        error = unreadable(exc, "stream")
        record.fail(error)
        raise error from exc
    except BaseException as exc:  # the client went away or the task was cancelled
        record.fail(GatewayError(f"stream interrupted: {type(exc).__name__}"))
        raise
    record.finish()
