"""Creating and reading video tasks for the three inbound video formats.

The formats: ``ark`` (protocol A, ``/v1/alpha/…``), ``dashscope`` (protocol B, ``/v1/beta/…``)
and ``generic`` (protocol C, ``/v1/video/…``). Creation validates against the model's
capabilities, keeps the model's upstreams whose protocol has video tasks in a format this one
reaches (passed through when the upstream speaks it, translated by a pair module otherwise; a
``CapabilityMissing`` 400 when none does), picks an upstream (priority, weight, health; failing
over only before a task exists upstream), and writes the task row before answering: the row is
the job, and an id handed to a client must survive a restart.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.utils import timezone

from studio.core.entries import ModelEntry, UpstreamEntry
from studio.core.errors import BadRequest, CapabilityMissing, NotFound
from studio.core.principal import Principal
from studio.core.video_states import ACTIVE_STATUSES
from studio.gateway import routing, snapshot
from studio.gateway.auth import resolve_model
from studio.gateway.media.url_safety import check_public_target
from studio.gateway.text_checks import refuse_nul
from studio.gateway.video import settings as video_settings
from studio.gateway.video import spend as video_spend
from studio.gateway.video.rules_ark import validate_ark
from studio.gateway.video.rules_dashscope import validate_dashscope
from studio.gateway.video.signing import callback_url
from studio.gateway.video.translations import PAIRS, pair, upstream_format
from studio.gateway.video.view import TaskView, view_of
from studio.models.videos import VideoProtocol, VideoTask, is_task_id, new_task_id
from studio.providers.contracts import Capability
from studio.providers.registry import capable, effective_protocol, vendor_for, video_upstream

logger = logging.getLogger(__name__)

DEFAULT_EXPIRES_AFTER = 172800
STALE_SECONDS = 3.0
Validator = Callable[[dict[str, Any], str, dict[str, Any]], None]


@dataclass(frozen=True)
class VideoFormat:
    name: str  # a VideoProtocol value
    path: str  # where clients send it
    route: str  # the catalog route a model must list
    validate: Validator | None  # the format's own rules; None: checked by the translation instead

    def reaches(self, upstream_format: str | None) -> bool:
        """Passed through when the upstream speaks this format, else through a pair module."""
        return upstream_format == self.name or (self.name, upstream_format or "") in PAIRS


FORMATS = {
    VideoProtocol.ARK: VideoFormat(VideoProtocol.ARK, "/v1/alpha/video/generations", "video.ark", validate_ark),
    VideoProtocol.DASHSCOPE: VideoFormat(VideoProtocol.DASHSCOPE, "/v1/beta/video/generations", "video.dashscope", validate_dashscope),
    VideoProtocol.GENERIC: VideoFormat(VideoProtocol.GENERIC, "/v1/video/generations", "video.generic", None),
}


def _prompt(fmt: str, body: dict[str, Any]) -> str:
    if fmt == VideoProtocol.ARK:
        texts = [i.get("text", "") for i in body.get("content") or [] if isinstance(i, dict) and i.get("type") == "text"]
        return " ".join(t for t in texts if isinstance(t, str))
    if fmt == VideoProtocol.DASHSCOPE:
        return str((body.get("input") or {}).get("prompt") or "")
    return str(body.get("prompt") or "")


def _upstreams(fmt: VideoFormat, model: ModelEntry, snap_upstreams: list[UpstreamEntry]) -> list[UpstreamEntry]:
    """The model's upstreams that can run a task sent in ``fmt`` (a 400 if none can)."""
    ups = capable(snap_upstreams, model, Capability.VIDEO_TASKS)
    reachable = [up for up in ups if fmt.reaches(upstream_format(up, model))]
    if ups and not reachable:
        spoken = ", ".join(sorted({str(upstream_format(up, model)) for up in ups}))
        raise CapabilityMissing(f"model '{model.model_id}' cannot be used on {fmt.path}: "
                                f"its upstreams take video tasks in {spoken}")
    return reachable


async def create(principal: Principal, protocol_name: str, body: Any) -> VideoTask:
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object", param="body")
    refuse_nul(body)
    fmt = FORMATS[VideoProtocol(protocol_name)]
    model_id = body.get("model")
    if not isinstance(model_id, str) or not model_id:
        raise BadRequest("model: a platform model identifier is required", param="model", code="MissingParameter")
    snap = await snapshot.get()
    model = resolve_model(snap, principal, model_id, fmt.route)
    if fmt.validate is not None:
        fmt.validate(body, model.model_id, model.capabilities)
    ups = _upstreams(fmt, model, routing.candidates(snap, model_id))
    client_hook = body.get("callback_url")
    if isinstance(client_hook, str) and client_hook:
        await check_public_target(client_hook, field="callback_url")  # refused now, not at delivery
    if fmt.validate is None and ups:
        _upstream_body(fmt, body, model, ups[0])  # a 400 before any call; each translation checks the same

    task_id = new_task_id()
    expires_after = body.get("execution_expires_after") if fmt.name == VideoProtocol.ARK else None
    until = timezone.now() + timedelta(seconds=expires_after or DEFAULT_EXPIRES_AFTER)
    ticket = await video_spend.admit(principal, fmt.name, body, model, task_id, until.timestamp())

    async def call(up: UpstreamEntry) -> tuple[str, dict[str, Any], bool]:
        provider = video_upstream(effective_protocol(up, model), up)
        upstream_body = _upstream_body(fmt, body, model, up)
        injected = False
        field = provider.callback_field
        if field and video_settings.callbacks_enabled():
            upstream_body[field] = callback_url(task_id)
            injected = True
        elif field:
            # The client's own callback_url is ours to relay (signed, in its protocol); passed
            # through, the vendor would call the client directly with its raw record.
            upstream_body.pop(field, None)
        upstream_body["model"] = up.upstream_model(model_id)
        return await provider.video_create(upstream_body), upstream_body, injected

    try:
        upstream, (upstream_task_id, _sent, injected) = await routing.with_failover(ups, call)
    except BaseException:
        ticket.charge(None, None)
        await video_spend.release_slots(principal.key_id, model_id, task_id)
        raise
    ticket.upstream_id = upstream.id  # charged when the task ends; the request's metrics name the upstream now
    now = timezone.now()
    task = VideoTask(
        id=task_id, user_id=principal.user_id, api_key_id=principal.key_id, team_id=principal.team_id,
        protocol=fmt.name, model_id=model_id, upstream_id=upstream.id,
        upstream_protocol=effective_protocol(upstream, model), upstream_model=upstream.upstream_model(model_id),
        upstream_task_id=upstream_task_id, request=body, prompt=_prompt(fmt.name, body)[:20000],
        client_callback_url=_client_callback(fmt, body, upstream, model), callback_injected=injected, event_seq=1,
        next_poll_at=now + timedelta(seconds=video_settings.first_poll_seconds()), created=now, updated=now,
        expires_at=until, reserved_usd=video_spend.reserved(ticket), reserved_at=ticket.at,
    )
    from studio.gateway.video.apply import announce, insert_new

    await sync_to_async(insert_new)(task)
    await announce(task)
    return task


def _upstream_body(fmt: VideoFormat, body: dict[str, Any], model: ModelEntry, up: UpstreamEntry) -> dict[str, Any]:
    target = upstream_format(up, model)
    if target == fmt.name:
        # Same wire format: pass through (unknown fields survive); only model and callback change.
        return dict(body)
    return pair(fmt.name, target).translate(body, model.model_id, model.capabilities)


def _client_callback(fmt: VideoFormat, body: dict[str, Any], up: UpstreamEntry, model: ModelEntry) -> str:
    url = body.get("callback_url")
    if not isinstance(url, str) or not url:
        return ""
    if fmt.name == VideoProtocol.GENERIC and not vendor_for(up, model).has_callbacks:
        return ""  # generic's callback_url is effective only on upstreams with task callbacks (protocol A)
    return url


async def get_for(principal: Principal, protocol_name: str, task_id: str) -> VideoTask:
    """The caller's task as stored; another principal's (or another protocol's) id is not found."""
    task = None
    if is_task_id(task_id):
        task = await VideoTask.objects.filter(id=task_id, user_id=principal.user_id, protocol=protocol_name).afirst()
    if task is None:
        raise NotFound(f"task '{task_id}' was not found", param="taskId", code="ResourceNotFound")
    if task.status in ACTIVE_STATUSES and _stale(task):
        # Never block the query on the upstream: refresh behind it (the worker does the same).
        from studio.gateway.video.poll import refresh_soon

        refresh_soon(task.id)
    return task


async def read(principal: Principal, protocol_name: str, task_id: str) -> TaskView:
    """The caller's task, as the inbound protocols show it."""
    return view_of(await get_for(principal, protocol_name, task_id))


def _stale(task: VideoTask) -> bool:
    now = timezone.now()
    last = task.last_polled_at or task.created
    return (now - last).total_seconds() >= STALE_SECONDS and task.next_poll_at <= now + timedelta(seconds=1)

