"""Creating and reading video tasks for the three inbound protocols.

Creation validates against the model's capabilities, picks an upstream (priority, weight,
health; failing over only before a task exists upstream), sends the body in the upstream's
protocol (passed through for A→Ark and B→DashScope, translated for C), and writes the task row
before answering: the row is the job, and an id handed to a client must survive a restart.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.utils import timezone

from studio.models.videos import ACTIVE_STATUSES, VideoTask, new_task_id
from studio.providers.registry import effective_protocol, provider_for

from . import routing, snapshot, video_settings
from .errors import BadRequest, NotFound, NoUpstream
from .principal import Principal, resolve_model
from .snapshot import ModelEntry, UpstreamEntry
from .video_generic import translator
from .video_rules import validate_alpha
from .video_rules_beta import validate_beta
from .video_signing import callback_url

logger = logging.getLogger(__name__)

DEFAULT_EXPIRES_AFTER = 172800
STALE_SECONDS = 3.0


@dataclass(frozen=True)
class InboundProtocol:
    name: str
    route: str
    passthrough_protocol: str | None  # None: translated for whichever protocol serves the model

    def validate(self, body: dict[str, Any], model: ModelEntry) -> None:
        VALIDATORS[self.name](body, model.model_id, model.capabilities)


VALIDATORS = {"A": validate_alpha, "B": validate_beta}
PROTOCOLS = {
    "A": InboundProtocol("A", "video.alpha", "ark"),
    "B": InboundProtocol("B", "video.beta", "dashscope"),
    "C": InboundProtocol("C", "video.generic", None),
}


def _prompt(protocol: str, body: dict[str, Any]) -> str:
    if protocol == "A":
        texts = [i.get("text", "") for i in body.get("content") or [] if isinstance(i, dict) and i.get("type") == "text"]
        return " ".join(t for t in texts if isinstance(t, str))
    if protocol == "B":
        return str((body.get("input") or {}).get("prompt") or "")
    return str(body.get("prompt") or "")


async def create(principal: Principal, protocol_name: str, body: Any) -> VideoTask:
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object", param="body")
    protocol = PROTOCOLS[protocol_name]
    model_id = body.get("model")
    if not isinstance(model_id, str) or not model_id:
        raise BadRequest("model: a platform model identifier is required", param="model", code="MissingParameter")
    snap = await snapshot.get()
    model = resolve_model(snap, principal, model_id, protocol.route)
    if protocol.passthrough_protocol:
        protocol.validate(body, model)
    else:
        translator(model.default_protocol).translate(body, model.model_id, model.capabilities)

    task_id = new_task_id()
    ups = routing.candidates(snap, model_id)
    if protocol.passthrough_protocol:
        ups = [u for u in ups if effective_protocol(u, model) == protocol.passthrough_protocol]
        if not ups:
            raise NoUpstream(f"no upstream speaks protocol {protocol.name} for model '{model_id}'", param="model")

    async def call(up: UpstreamEntry) -> tuple[str, dict[str, Any], bool]:
        provider = provider_for(up, model)
        upstream_body = _upstream_body(protocol, body, model, up)
        injected = False
        field = getattr(provider, "video_callback_field", None)
        if field and video_settings.callbacks_enabled():
            upstream_body[field] = callback_url(task_id)
            injected = True
        upstream_body["model"] = up.upstream_model(model_id)
        return await provider.video_create(upstream_body), upstream_body, injected

    upstream, (upstream_task_id, _sent, injected) = await routing.with_failover(ups, call)
    now = timezone.now()
    expires_after = body.get("execution_expires_after") if protocol.name == "A" else None
    task = VideoTask(
        id=task_id, user_id=principal.user_id, api_key_id=principal.key_id, team_id=principal.team_id,
        protocol=protocol.name, model_id=model_id, upstream_id=upstream.id,
        upstream_protocol=effective_protocol(upstream, model), upstream_model=upstream.upstream_model(model_id),
        upstream_task_id=upstream_task_id, request=body, prompt=_prompt(protocol.name, body)[:20000],
        client_callback_url=_client_callback(protocol, body, upstream, model), callback_injected=injected, event_seq=1,
        next_poll_at=now + timedelta(seconds=video_settings.first_poll_seconds()), created=now, updated=now,
        expires_at=now + timedelta(seconds=expires_after or DEFAULT_EXPIRES_AFTER),
    )
    await task.asave(force_insert=True)
    from .video_apply import announce

    await announce(task)
    return task


def _upstream_body(protocol: InboundProtocol, body: dict[str, Any], model: ModelEntry,
                   up: UpstreamEntry) -> dict[str, Any]:
    if protocol.passthrough_protocol:
        # Same wire format: pass through (unknown fields survive); only model and callback change.
        return dict(body)
    return translator(effective_protocol(up, model)).translate(body, model.model_id, model.capabilities)


def _client_callback(protocol: InboundProtocol, body: dict[str, Any], up: UpstreamEntry, model: ModelEntry) -> str:
    url = body.get("callback_url")
    if not isinstance(url, str) or not url:
        return ""
    if protocol.name == "C" and not translator(effective_protocol(up, model)).CALLBACKS:
        return ""  # C's callback_url is effective only for protocol A upstreams
    return url


async def get_for(principal: Principal, protocol_name: str, task_id: str) -> VideoTask:
    """The caller's task as stored; another principal's (or another protocol's) id is not found."""
    task = await VideoTask.objects.filter(id=task_id, user_id=principal.user_id, protocol=protocol_name).afirst()
    if task is None:
        raise NotFound(f"task '{task_id}' was not found", param="taskId", code="ResourceNotFound")
    if task.status in ACTIVE_STATUSES and _stale(task):
        # Never block the query on the upstream: refresh behind it (the worker does the same).
        from .video_poll import refresh_soon

        refresh_soon(task.id)
    return task


def _stale(task: VideoTask) -> bool:
    now = timezone.now()
    last = task.last_polled_at or task.created
    return (now - last).total_seconds() >= STALE_SECONDS and task.next_poll_at <= now + timedelta(seconds=1)

