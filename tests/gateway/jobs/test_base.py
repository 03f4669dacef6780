"""What every studio job shares: numbered events kept on the row and published, one final event."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from studio.core.errors import BadRequest
from studio.core.principal import Principal
from studio.gateway.jobs import base
from studio.gateway.live import job_group, user_group
from studio.gateway.media.storage import store_bytes
from studio.models import Asset, Generation, Visibility

pytestmark = pytest.mark.django_db(transaction=True)


class ScriptedJob(base.StudioJob):
    """A job whose execution is given by the test: the base class's behaviour is what is checked."""

    def __init__(self, principal, behaviour, **kw) -> None:
        super().__init__(principal, "kappa-image-1", "a kettle", **kw)
        self.behaviour = behaviour

    async def prepare(self) -> None:
        await self.create_row({"size": "1024x1024"})

    async def execute(self):
        return await self.behaviour(self)


async def run(job: ScriptedJob) -> list[dict]:
    await job.prepare()
    await job.run()
    generation = await Generation.objects.aget(id=job.id)
    return generation.events


async def test_a_successful_job_numbers_its_events_and_ends_completed(crew):
    async def behaviour(job):
        await job.emit("job.text", {"text": "hello"})
        job.final_count = 2
        return {"usage": {"total_tokens": 5}}

    events = await run(ScriptedJob(Principal(user_id=crew.member.id), behaviour, compare="cmp-1"))
    assert [e["type"] for e in events] == ["job.started", "job.text", "job.completed"]
    assert [e["seq"] for e in events] == [1, 2, 3]
    assert events[0]["data"] == {"model": "kappa-image-1", "prompt": "a kettle", "compare": "cmp-1", "group": None}
    done = events[-1]["data"]
    assert done["images"] == 2 and done["usage"] == {"total_tokens": 5} and done["duration_ms"] >= 0
    row = await Generation.objects.aget(id=events[0]["id"])
    assert row.route == "studio" and row.parameters == {"size": "1024x1024", "compare": "cmp-1"}


async def test_a_typed_error_fails_the_job_naming_the_field(crew):
    async def behaviour(job):
        raise BadRequest("the seed must be a whole number", param="seed")

    events = await run(ScriptedJob(Principal(user_id=crew.member.id), behaviour))
    assert events[-1]["type"] == "job.failed"
    assert events[-1]["data"] == {"status": 400, "message": "the seed must be a whole number", "param": "seed"}


async def test_an_unexpected_error_is_an_internal_failure(crew):
    async def behaviour(job):
        raise RuntimeError("bug")

    events = await run(ScriptedJob(Principal(user_id=crew.member.id), behaviour))
    assert events[-1]["type"] == "job.failed" and events[-1]["data"] == {"status": 500, "message": "internal error"}


async def test_events_are_published_to_the_job_and_the_gallery_to_the_user(crew):
    layer = get_channel_layer()
    job = ScriptedJob(Principal(user_id=crew.member.id), lambda job: asyncio.sleep(0, {}))
    job_channel, user_channel = await layer.new_channel(), await layer.new_channel()
    await layer.group_add(job_group(str(job.id)), job_channel)
    await layer.group_add(user_group(crew.member.id), user_channel)
    await run(job)
    published = [(await layer.receive(job_channel))["event"]["type"] for _ in range(2)]
    assert published == ["job.started", "job.completed"]
    assert (await layer.receive(user_channel))["event"]["type"] == "gallery.changed"


async def test_outputs_of_a_team_job_are_shared_with_the_team(crew):
    async def behaviour(job):
        asset = await sync_to_async(store_bytes)(b"\x89PNG\r\n\x1a\nx", "image/png", owner_id=crew.member.id)
        job.outputs.append(asset.id)
        return {}

    job = ScriptedJob(Principal(user_id=crew.member.id, team_id=crew.team.id), behaviour)
    await run(job)
    assert (await Asset.objects.aget(id=job.outputs[0])).visibility == Visibility.TEAM


async def test_launch_runs_in_the_background_and_can_be_awaited(crew):
    job = ScriptedJob(Principal(user_id=crew.member.id), lambda job: asyncio.sleep(0.05, {}))
    await job.prepare()
    job.launch()
    assert base._running
    await base.wait_for_running_jobs()
    assert (await Generation.objects.aget(id=job.id)).events[-1]["type"] == "job.completed"


def test_share_with_team_without_team_changes_nothing(crew):
    asset = store_bytes(b"\x89PNG\r\n\x1a\ny", "image/png", owner_id=crew.member.id)
    base.share_with_team([asset.id], None)
    assert Asset.objects.get(id=asset.id).visibility == Visibility.PRIVATE
    assert "00000000-0000-0000-0000-000000000001" in base.asset_url(uuid.UUID(int=1))
