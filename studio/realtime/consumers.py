"""The studio's one WebSocket per page: start jobs (one model, or several to compare), follow
them, and catch up after reconnects from the stored record.

Messages in: ``generate`` {ref, model, prompt, options, inputs, team}, ``compare`` {ref, models,
prompt, options, model_options, inputs, team}, ``variations`` {ref, asset, count}, ``edit`` (see
``edit``), ``subscribe`` {job, after}. Events out: ``{type, id, seq, data}``.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from studio.core.errors import GatewayError
from studio.core.principal import Principal
from studio.gateway import metrics
from studio.gateway.jobs.access import remember_prompt, stored_events, team_for_saving
from studio.gateway.jobs.base import StudioJob
from studio.gateway.jobs.edit import start_edit
from studio.gateway.jobs.factory import build_job
from studio.gateway.jobs.inputs import InputImage, load_inputs, parse_ids
from studio.gateway.jobs.variations import start_variations
from studio.gateway.live import job_group, rejection, user_group

logger = logging.getLogger(__name__)

MAX_COMPARE = 4


class StudioConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        self.user = user
        self.user_id: int = user.id
        self.jobs: set[str] = set()
        self.sent: dict[str, int] = {}  # per job, the highest seq this socket has sent
        metrics.websocket_opened()  # before anything that may fail: disconnect() counts it down
        await self.channel_layer.group_add(user_group(self.user_id), self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if not hasattr(self, "user_id"):
            return
        metrics.websocket_closed()
        await self.channel_layer.group_discard(user_group(self.user_id), self.channel_name)
        for job in self.jobs:
            await self.channel_layer.group_discard(job_group(job), self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict):
            return
        action = content.get("action")
        handler = {"generate": self.generate, "compare": self.compare, "subscribe": self.subscribe,
                   "edit": self.edit, "variations": self.variations}.get(str(action))
        if handler is None:
            await self.send_json({"type": "error", "data": {"message": f"unknown action {action!r}"}})
            return
        await handler(content)

    async def _setup(self, content: dict[str, Any]) -> tuple[Principal, dict[str, Any], list[InputImage]]:
        """The principal (personal or a team the user adds to), the options and the reference images."""
        team_id = await database_sync_to_async(team_for_saving)(self.user_id, content.get("team"))
        options = content.get("options") if isinstance(content.get("options"), dict) else {}
        ids = parse_ids(content.get("inputs"))
        inputs = await database_sync_to_async(load_inputs)(self.user, ids) if ids else []
        return Principal(user_id=self.user_id, team_id=team_id), options, inputs

    async def _start(self, job: StudioJob, ref: Any) -> None:
        # Join the job's group before it runs, so no live event is missed.
        await self.follow(str(job.id))
        await self.send_json({"type": "job.accepted", "id": str(job.id), "seq": 0, "ref": ref,
                              "data": {"model": job.model_id, "compare": job.compare}})
        job.launch()

    async def _remember(self, prompt: Any) -> None:
        text = str(prompt or "").strip()
        if not text:
            return
        try:
            await database_sync_to_async(remember_prompt)(self.user_id, text)
        except Exception:  # the history is a convenience; a failure there must not stop the job
            logger.exception("could not add a prompt to the history of user %s", self.user_id)

    async def generate(self, content: dict[str, Any]) -> None:
        """Start one job from the Generate form."""
        ref = content.get("ref")
        model = str(content.get("model") or "")
        try:
            principal, options, inputs = await self._setup(content)
            job = await build_job(principal, model, content.get("prompt"), options, inputs)
        except GatewayError as exc:
            await self.send_json(rejection(ref, exc, model))
            return
        await self._start(job, ref)
        await self._remember(content.get("prompt"))

    async def compare(self, content: dict[str, Any]) -> None:
        """The same prompt on several models at once; each model is its own job."""
        ref = content.get("ref")
        models = content.get("models")
        if not isinstance(models, list) or not 2 <= len(set(map(str, models))) <= MAX_COMPARE:
            await self.send_json(rejection(ref, GatewayError(
                f"choose 2 to {MAX_COMPARE} models to compare", param="models")))
            return
        try:
            principal, options, inputs = await self._setup(content)
        except GatewayError as exc:
            await self.send_json(rejection(ref, exc))
            return
        run = str(uuid.uuid4())
        await self.send_json({"type": "compare.accepted", "ref": ref, "data": {"compare": run}})
        started = 0
        own = content.get("model_options") if isinstance(content.get("model_options"), dict) else {}
        for model in dict.fromkeys(map(str, models)):
            extra = own.get(model) if isinstance(own.get(model), dict) else {}
            try:
                job = await build_job(principal, model, content.get("prompt"), {**options, **extra}, inputs,
                                      compare=run)
            except GatewayError as exc:
                await self.send_json(rejection(ref, exc, model))
                continue
            await self._start(job, ref)
            started += 1
        if started:
            await self._remember(content.get("prompt"))

    async def edit(self, content: dict[str, Any]) -> None:
        """One turn of a multi-turn edit session (see ``edit_job``)."""
        await start_edit(self, content)

    async def variations(self, content: dict[str, Any]) -> None:
        """Variations of a result, as one group of jobs (see ``variations``)."""
        await start_variations(self, content)

    async def subscribe(self, content: dict[str, Any]) -> None:
        """Follow a job and replay the events after ``after`` from its stored record."""
        job_id = str(content.get("job") or "")
        try:
            after = int(content.get("after") or 0)
        except (TypeError, ValueError):
            after = 0
        events = await database_sync_to_async(stored_events)(self.user_id, job_id)
        if events is None:
            await self.send_json({"type": "job.unknown", "id": job_id, "data": {}})
            return
        # Read again after joining: an event stored in between is in this read, and one published
        # after joining also arrives live (handled after this replay), where ``send_new`` drops it.
        await self.follow(job_id)
        events = await database_sync_to_async(stored_events)(self.user_id, job_id) or events
        self.sent[job_id] = max(self.sent.get(job_id, 0), after)
        for event in events:
            await self.send_new(event)

    async def send_new(self, event: dict[str, Any]) -> None:
        """Send an event, unless it is a followed job's and this socket has sent it (or a later one)."""
        job_id, seq = str(event.get("id") or ""), event.get("seq")
        if job_id in self.jobs and isinstance(seq, int) and seq > 0:
            if seq <= self.sent.get(job_id, 0):
                return
            self.sent[job_id] = seq
        await self.send_json(event)

    async def follow(self, job_id: str) -> None:
        if job_id not in self.jobs:
            self.jobs.add(job_id)
            await self.channel_layer.group_add(job_group(job_id), self.channel_name)

    async def studio_event(self, message: dict[str, Any]) -> None:
        await self.send_new(message["event"])
