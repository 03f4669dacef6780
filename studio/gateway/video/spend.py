"""A video task's spend: reserved when it is created, charged when it succeeds, released otherwise.

The estimate is the duration asked for (or the model's longest) at the resolution asked for;
the charge is the seconds the upstream reports making. Concurrent-task limits hold a slot from
creation until the task ends.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any

from studio.core.entries import ModelEntry
from studio.core.principal import Principal
from studio.core.video_states import UpstreamVideoState, VideoStatus
from studio.gateway import admission, budgets, counters, limits, metrics, prices, snapshot
from studio.gateway.cost import Usage, compute, from_nano, to_nano
from studio.models.videos import VideoProtocol

logger = logging.getLogger(__name__)


def _params(protocol: str, body: dict[str, Any]) -> dict[str, Any]:
    params = body.get("parameters") if protocol == VideoProtocol.DASHSCOPE else body
    return params if isinstance(params, dict) else {}


def requested(protocol: str, body: dict[str, Any], model: ModelEntry) -> Usage:
    """What the create body asks for: seconds, resolution and audio."""
    params, caps = _params(protocol, body), model.capabilities
    seconds = params.get("duration", params.get("seconds"))
    if not isinstance(seconds, int | float) or seconds <= 0:
        duration = caps.get("duration") if isinstance(caps.get("duration"), dict) else {}
        seconds = duration.get("max") or 10
    resolution = str(params.get("resolution") or params.get("size") or caps.get("default_resolution") or "")
    audio = params.get("generate_audio", params.get("audio", bool(caps.get("generate_audio", protocol != VideoProtocol.ARK))))
    return Usage(video_seconds=float(seconds), video_resolution=resolution.lower(), video_audio=audio is True,
                 requests=1)


def made(record: dict[str, Any], asked: Usage) -> Usage:
    """What the upstream reports it made (the seconds of the video), else what was asked."""
    usage = record.get("usage") if isinstance(record.get("usage"), dict) else {}
    seconds = (record.get("duration") or usage.get("output_video_duration") or usage.get("video_duration")
               or usage.get("duration"))
    if not isinstance(seconds, int | float) or seconds <= 0:
        frames, fps = record.get("frames"), record.get("framespersecond") or 24
        seconds = frames / fps if isinstance(frames, int) and frames > 0 else asked.video_seconds
    resolution = str(record.get("resolution") or asked.video_resolution).lower()
    audio = record.get("generate_audio")
    return Usage(video_seconds=float(seconds), video_resolution=resolution,
                 video_audio=asked.video_audio if not isinstance(audio, bool) else audio, requests=1)


async def admit(principal: Principal, protocol: str, body: dict[str, Any], model: ModelEntry, task_id: str,
                until: float) -> admission.Ticket:
    """Limits, budgets and a concurrent-task slot for a new task, or the family's 429."""
    snap = await snapshot.get()
    ticket = await admission.admit(principal, model, requested(protocol, body, model), snap=snap)
    taken: list[str] = []
    try:
        for key, limit, scope in limits.video_slot(limits.entries_for(snap, principal, model.model_id),
                                                  principal.key_id or 0):
            ok, _ = await counters.get().take_slot(key, task_id, limit, until)
            if not ok:
                raise limits.video_refusal(limit, scope)
            taken.append(key)
    except BaseException:
        ticket.charge(None, None)
        for key in taken:
            await counters.get().free_slot(key, task_id)
        raise
    return ticket


async def release_slots(key_id: int | None, model_id: str, task_id: str) -> None:
    if key_id is None:
        return
    snap = await snapshot.get()
    principal = Principal(user_id=0, key_id=key_id)
    for key, _limit, _scope in limits.video_slot(limits.entries_for(snap, principal, model_id), key_id):
        try:
            await counters.get().free_slot(key, task_id)
        except Exception:
            logger.warning("freeing a video slot failed", exc_info=True)


async def finish(task: Any, state: UpstreamVideoState) -> Decimal:
    """Charge a task that just ended (once): its cost, the usage row, the budgets' settlement."""
    from studio.models import UsageRecord, VideoTask

    snap = await snapshot.get()
    model = snap.models.get(task.model_id)
    cost = Decimal(0)
    usage = None
    if state.status == VideoStatus.SUCCEEDED and model is not None:
        usage = made(state.record or {}, requested(task.protocol, task.request or {}, model))
        price = prices.find(snap.prices.get(task.model_id, ()), task.upstream_id, task.reserved_at or task.created.timestamp())
        cost = compute(price, usage)
    claimed = await VideoTask.objects.filter(id=task.id, settled=False).aupdate(settled=True, cost_usd=cost)
    if not claimed:
        return Decimal(task.cost_usd)
    task.cost_usd, task.settled = cost, True
    metrics.video_finished(task.model_id, str(state.status), usage)
    principal = Principal(user_id=task.user_id, key_id=task.api_key_id, team_id=task.team_id)
    entries = budgets.applicable(snap, principal)
    if entries:
        _, holds = budgets.checks(entries, 0, task.reserved_at or task.created.timestamp())
        await admission.settle(holds, to_nano(cost) - to_nano(Decimal(task.reserved_usd)), [])
    await release_slots(task.api_key_id, task.model_id, task.id)
    await UsageRecord.objects.acreate(
        api_key_id=task.api_key_id, user_id=task.user_id, team_id=task.team_id, model_id=task.model_id,
        upstream_id=task.upstream_id, route=f"video.{task.protocol}", cost_usd=cost,
        status_code=200 if state.status == VideoStatus.SUCCEEDED else 502,
        video_seconds=usage.video_seconds if usage is not None else 0,
        latency_ms=int((task.finished_at - task.created).total_seconds() * 1000) if task.finished_at else None,
    )
    return cost


def reserved(ticket: admission.Ticket) -> Decimal:
    return from_nano(ticket.reserved_nano)
