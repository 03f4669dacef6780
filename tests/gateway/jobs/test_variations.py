"""Variations of a result: the same prompt and settings on its model, each with a new seed, as one
group of jobs; refused naming the field when the result is not the user's to see."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from studio.gateway.jobs.base import wait_for_running_jobs
from studio.models import Asset, Generation
from tests.realtime.socket_helpers import connect, of_kind
from tests.web.test_result_views import generated

pytestmark = pytest.mark.django_db(transaction=True)


async def test_four_variations_with_distinct_seeds(alice, catalog, make_account):
    source = await sync_to_async(generated)(alice.user, "delta-3.1-flash-lite-image",
                                            {"generationConfig": {"imageConfig": {"aspectRatio": "1:1"}, "seed": 1}})
    socket = await connect(alice.user)
    await socket.send_json_to({"action": "variations", "ref": "v", "asset": str(source.id), "count": 4})
    events, done = [], 0
    while done < 4:
        event = await socket.receive_json_from(timeout=60)
        events.append(event)
        done += event["type"] in ("job.completed", "job.failed")
    assert of_kind(events, "compare.accepted")[0]["data"]["variations"] == 4
    assert [e["type"] for e in events if e["type"] in ("job.completed", "job.failed")] == ["job.completed"] * 4
    await wait_for_running_jobs()
    runs = [g async for g in Generation.objects.exclude(id=source.generation_id)]
    seeds = {g.parameters["generationConfig"]["seed"] for g in runs}
    assert len(runs) == 4 and len(seeds) == 4 and 1 not in seeds
    assert {g.prompt for g in runs} == {"a red fox"}
    assert len({e["data"]["compare"] for e in of_kind(events, "job.accepted")}) == 1  # one group
    pictures = {a.content_hash async for a in Asset.objects.filter(generation__in=runs, is_draft=False)}
    assert len(pictures) == 4  # new seeds, new pictures

    bob = await sync_to_async(make_account)("bob")
    other = await connect(bob.user)
    await other.send_json_to({"action": "variations", "ref": "x", "asset": str(source.id)})
    refused = await other.receive_json_from(timeout=10)
    assert refused["type"] == "job.rejected" and refused["data"]["param"] == "asset"
    await socket.disconnect()
    await other.disconnect()
