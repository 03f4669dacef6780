"""The engine for embeddings: check, route with failover, record the input tokens and their cost.

Both inbound shapes (OpenAI's ``/v1/embeddings``, the native ``:embedContent`` and
``:batchEmbedContents``) arrive as an ``EmbeddingJob`` on their own catalog route; any upstream
whose protocol has embeddings serves either, since the job and the result are neutral. A job of
token ids goes only to the upstreams whose protocol takes them (OpenAI's), a 400 naming the
input's field when the model has none.
"""

from __future__ import annotations

from studio.core.embeddings import EmbeddingJob, EmbeddingResult, estimate_tokens
from studio.core.entries import ModelEntry, UpstreamEntry
from studio.core.errors import SHAPE_ERRORS, BadRequest, CapabilityMissing, GatewayError, unreadable
from studio.core.principal import Principal
from studio.gateway import admission, routing, snapshot
from studio.gateway.auth import resolve_model
from studio.gateway.cost import Usage
from studio.gateway.text.record import TextRecord
from studio.providers.contracts import Capability
from studio.providers.registry import capable, embeddings_upstream

OPENAI_ROUTE = "embeddings"
NATIVE_ROUTE = "native.embed"
DEFAULT_MAX_INPUTS = 2048
DEFAULT_MAX_INPUT_TOKENS = 8192  # an input's tokens at most (OpenAI's embedding models)


def validate(job: EmbeddingJob, model: ModelEntry, *, field: str, dimensions_field: str) -> None:
    """The job against the model's limits; a 400 naming the client's field."""
    caps = model.capabilities
    most = int(caps.get("max_inputs") or DEFAULT_MAX_INPUTS)
    if not job.inputs:
        raise BadRequest(f"{field}: at least one text to embed is required", param=field)
    if len(job.inputs) > most:
        raise BadRequest(f"{field}: model '{model.model_id}' embeds at most {most} texts per request", param=field)
    most_tokens = int(caps.get("input_token_limit") or DEFAULT_MAX_INPUT_TOKENS)
    for index, item in enumerate(job.inputs):
        if isinstance(item, str):
            if not item.strip():
                raise BadRequest(f"{field}[{index}]: an empty text cannot be embedded", param=field)
        elif not item:
            raise BadRequest(f"{field}[{index}]: an empty token array cannot be embedded", param=field)
        elif len(item) > most_tokens:
            raise BadRequest(f"{field}[{index}]: {len(item)} tokens; model '{model.model_id}' embeds at most "
                             f"{most_tokens} tokens per input", param=field)
    if job.dimensions is not None:
        full, smallest = int(caps.get("dimensions") or 0), int(caps.get("min_dimensions") or 1)
        if not caps.get("flexible_dimensions"):
            raise BadRequest(f"{dimensions_field}: model '{model.model_id}' does not take a number of dimensions",
                             param=dimensions_field)
        if not smallest <= job.dimensions <= full:
            raise BadRequest(f"{dimensions_field}: must be between {smallest} and {full} for model "
                             f"'{model.model_id}'", param=dimensions_field)


async def embed(principal: Principal, model_id: str, job: EmbeddingJob, *, route: str, field: str,
                dimensions_field: str) -> EmbeddingResult:
    snap = await snapshot.get()
    model = resolve_model(snap, principal, model_id, route, use="embeddings")
    validate(job, model, field=field, dimensions_field=dimensions_field)
    capability = Capability.EMBEDDING_TOKENS if job.token_ids else Capability.EMBEDDINGS
    try:
        upstreams = capable(routing.candidates(snap, model_id), model, capability)
    except CapabilityMissing as exc:
        if capability is Capability.EMBEDDINGS:
            raise
        raise CapabilityMissing(f"{field}: {exc.message}; send the inputs as texts", param=field) from exc
    # Admitted once an upstream can take the job: a model that cannot reserves nothing.
    record = TextRecord(principal, model.model_id, route, False)
    estimate = estimate_tokens(job.inputs)
    record.ticket = await admission.admit(principal, model, Usage(input_tokens=estimate), tokens=estimate, snap=snap)

    async def attempt(up: UpstreamEntry) -> EmbeddingResult:
        try:
            return await embeddings_upstream(up, model, capability).embed(job, up.upstream_model(model_id))
        except SHAPE_ERRORS as exc:  # an answer not of its protocol's shape (a vector of words, say)
            raise unreadable(exc) from exc

    try:
        upstream, result = await routing.with_failover(upstreams, attempt)
    except GatewayError as exc:
        record.fail(exc)
        raise
    record.upstream_id = upstream.id
    record.first_chunk()
    record.usage(result.input_tokens, 0)
    record.finish()
    return result
