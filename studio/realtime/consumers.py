"""The studio's one WebSocket per page: start jobs, follow them, catch up after reconnects."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from studio.gateway.errors import GatewayError
from studio.gateway.principal import Principal

from .events import job_group, user_group
from .native_job import NativeJob

logger = logging.getLogger(__name__)


def can_see_generation(user_id: int, generation_id: str) -> list[dict[str, Any]] | None:
    """The stored events of a job the user may see, or None (unknown and forbidden look alike)."""
    from studio.models import Generation, Membership

    try:
        generation = Generation.objects.only("user_id", "team_id", "events").get(id=uuid.UUID(generation_id))
    except (ValueError, Generation.DoesNotExist):
        return None
    if generation.user_id == user_id:
        return list(generation.events)
    if generation.team_id and Membership.objects.filter(team_id=generation.team_id, user_id=user_id).exists():
        return list(generation.events)
    return None


class StudioConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        self.user_id: int = user.id
        self.jobs: set[str] = set()
        await self.channel_layer.group_add(user_group(self.user_id), self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if not hasattr(self, "user_id"):
            return
        await self.channel_layer.group_discard(user_group(self.user_id), self.channel_name)
        for job in self.jobs:
            await self.channel_layer.group_discard(job_group(job), self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict):
            return
        action = content.get("action")
        handler = {"generate": self.generate, "subscribe": self.subscribe}.get(str(action))
        if handler is None:
            await self.send_json({"type": "error", "data": {"message": f"unknown action {action!r}"}})
            return
        await handler(content)

    async def generate(self, content: dict[str, Any]) -> None:
        """Start a native generation from the Generate form."""
        model = str(content.get("model") or "")
        prompt = str(content.get("prompt") or "").strip()
        ref = content.get("ref")
        if not prompt:
            await self.send_json({"type": "job.rejected", "ref": ref, "data": {"message": "Write a prompt first.",
                                                                              "param": "prompt"}})
            return
        image_config = {}
        if content.get("aspect_ratio"):
            image_config["aspectRatio"] = str(content["aspect_ratio"])
        if content.get("image_size"):
            image_config["imageSize"] = str(content["image_size"])
        body: dict[str, Any] = {
            "contents": [{"role": "user", "parts": [{"text": prompt}]}],
            "generationConfig": {"responseModalities": ["TEXT", "IMAGE"], "imageConfig": image_config},
        }
        job = NativeJob(Principal(user_id=self.user_id), model, body, prompt)
        try:
            await job.prepare()
        except GatewayError as exc:
            await self.send_json({"type": "job.rejected", "ref": ref,
                                  "data": {"message": exc.message, "param": exc.param}})
            return
        # Join the job's group before it runs, so no live event is missed.
        await self.follow(str(job.id))
        await self.send_json({"type": "job.accepted", "id": str(job.id), "seq": 0, "ref": ref, "data": {}})
        job.launch()

    async def subscribe(self, content: dict[str, Any]) -> None:
        """Follow a job and replay the events after ``after`` from its stored record."""
        job_id = str(content.get("job") or "")
        after = int(content.get("after") or 0)
        events = await database_sync_to_async(can_see_generation)(self.user_id, job_id)
        if events is None:
            await self.send_json({"type": "job.unknown", "id": job_id, "data": {}})
            return
        await self.follow(job_id)
        for event in events:
            if event.get("seq", 0) > after:
                await self.send_json(event)

    async def follow(self, job_id: str) -> None:
        if job_id not in self.jobs:
            self.jobs.add(job_id)
            await self.channel_layer.group_add(job_group(job_id), self.channel_name)

    async def studio_event(self, message: dict[str, Any]) -> None:
        await self.send_json(message["event"])
