"""``POST /v1/messages/count_tokens``: a messages body's input tokens, counted by an upstream
that speaks messages and counts tokens, else estimated here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from studio.core.entries import UpstreamEntry
from studio.core.principal import Principal
from studio.gateway import routing, snapshot
from studio.gateway.auth import resolve_model
from studio.gateway.text import validation as text_validation
from studio.gateway.text.engine import parse, parse_upstream, upstream_formats
from studio.gateway.text.tokens import estimate_input_tokens
from studio.gateway.text_checks import refuse_nul
from studio.gateway.token_counts import count
from studio.providers.contracts import Capability
from studio.providers.registry import capable, supports, token_count_upstream


async def count_tokens(principal: Principal, raw: bytes, headers: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``{"input_tokens": N}`` for a messages body: the upstream's own count when its protocol
    counts tokens and it speaks messages, else the gateway's estimate; failover as for any call."""
    body = text_validation.validate("count_tokens", parse(raw), raw)
    refuse_nul(body, raw)
    snap = await snapshot.get()
    model = resolve_model(snap, principal, body["model"], "messages", use="/v1/messages/count_tokens")
    upstreams = capable(routing.candidates(snap, model.model_id), model, Capability.TEXT)

    async def attempt(upstream: UpstreamEntry) -> dict[str, Any]:
        if not supports(upstream, model, Capability.TOKEN_COUNT) or "messages" not in upstream_formats(model, upstream):
            return {"input_tokens": estimate_input_tokens(body)}
        sent = orjson.dumps({**body, "model": upstream.upstream_model(model.model_id)})
        answer = parse_upstream(await token_count_upstream(upstream, model).count_tokens(sent, headers))
        return {"input_tokens": count(answer, "input_tokens", "answer")}

    _, counted = await routing.with_failover(upstreams, attempt)
    return counted
