"""Live events: ``{type, id, seq, data}`` with ``seq`` increasing per job; groups per job and user.

Every event of a job is also kept on its Generation row, so a page that reconnects (or the same
job opened on another device) catches up from the record; the channel layer only notifies.
"""

from __future__ import annotations

from typing import Any

from channels.layers import get_channel_layer

from studio.core.errors import GatewayError


def job_group(job_id: str) -> str:
    return f"job.{job_id}"


def user_group(user_id: int) -> str:
    return f"user.{user_id}"


def make_event(kind: str, job_id: str, seq: int, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "id": job_id, "seq": seq, "data": data}


async def publish(group: str, event: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is not None:
        await layer.group_send(group, {"type": "studio.event", "event": event})


def rejection(ref: Any, exc: GatewayError, model: str | None = None) -> dict[str, Any]:
    return {"type": "job.rejected", "ref": ref, "data": {"message": exc.message, "param": exc.param, "model": model}}
