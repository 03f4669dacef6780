"""Compare runs, jobs made for a team (members follow them live, outsiders get nothing), and
catching up mid-job from the stored record."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from studio.gateway import recording
from studio.gateway.jobs.base import wait_for_running_jobs
from studio.models import Asset, Generation, Membership, Team, Visibility
from studio.models.accounts import Role
from tests.realtime.socket_helpers import END, collect_until, connect, of_kind

pytestmark = pytest.mark.django_db(transaction=True)


async def settle() -> None:
    await wait_for_running_jobs()
    await recording.drain()


@sync_to_async
def make_team(**members: str) -> Team:
    from django.contrib.auth.models import User

    team = Team.objects.create(name="Design", slug="design")
    for username, role in members.items():
        Membership.objects.create(team=team, user=User.objects.get(username=username), role=role)
    return team


async def test_compare_runs_each_model_with_its_own_latency_and_usage(alice):
    socket = await connect(alice.user)
    await socket.send_json_to({"action": "compare", "ref": "c1", "prompt": "a red bicycle by a canal",
                               "models": ["delta-3.1-flash-lite-image", "kappa-image-1", "sigma-5.0-image"],
                               "options": {"aspect_ratio": "16:9", "seed": 7}})
    first = await socket.receive_json_from(timeout=10)
    assert first["type"] == "compare.accepted"
    run = first["data"]["compare"]
    events: list[dict] = []
    done: set[str] = set()
    jobs: dict[str, str] = {}
    while len(done) < 3:
        event = await socket.receive_json_from(timeout=30)
        events.append(event)
        if event["type"] == "job.accepted":
            assert event["data"]["compare"] == run
            jobs[event["id"]] = event["data"]["model"]
        if event["type"] in END:
            done.add(event["id"])
    assert sorted(jobs.values()) == ["delta-3.1-flash-lite-image", "kappa-image-1", "sigma-5.0-image"]
    completed = {jobs[e["id"]]: e["data"] for e in of_kind(events, "job.completed")}
    assert set(completed) == set(jobs.values())
    for model, data in completed.items():
        assert data["images"] >= 1 and data["duration_ms"] > 0 and data["usage"], model
    assert completed["delta-3.1-flash-lite-image"]["usage"]["totalTokenCount"] > 0
    assert completed["kappa-image-1"]["usage"]["total_tokens"] > 0
    # Options the other models do not offer (aspect ratio, seed) went only where they apply.
    native = next(e for e in events if e["type"] == "job.image" and not e["data"]["thought"]
                  and jobs[e["id"]] == "delta-3.1-flash-lite-image")
    assert native["data"]["width"] > native["data"]["height"]
    await socket.disconnect()
    await settle()
    rows = [g async for g in Generation.objects.filter(id__in=list(jobs))]
    assert len(rows) == 3 and all(g.status == "succeeded" for g in rows)


async def test_compare_reports_a_refused_model_and_runs_the_others(alice):
    socket = await connect(alice.user)
    await socket.send_json_to({"action": "compare", "ref": "c2", "prompt": "a kite",
                               "models": ["kappa-image-1", "no-such-model"]})
    assert (await socket.receive_json_from(timeout=10))["type"] == "compare.accepted"
    events = await collect_until(socket, END)
    rejected = of_kind(events, "job.rejected")
    assert rejected and rejected[0]["data"]["model"] == "no-such-model"
    assert of_kind(events, "job.accepted")[0]["data"]["model"] == "kappa-image-1"
    await socket.disconnect()
    await settle()


async def test_team_member_follows_a_team_job_live_and_outsider_gets_nothing(alice, make_account, settings):
    settings.STUDIO_SANDBOX_DELAY = 0.25  # a slow vendor, so the job is still running
    bob = await sync_to_async(make_account)("bob")
    carol = await sync_to_async(make_account)("carol")
    team = await make_team(alice=Role.MEMBER, bob=Role.VIEWER)

    owner = await connect(alice.user)
    await owner.send_json_to({"action": "generate", "ref": "t", "model": "delta-3-pro-image",
                              "prompt": "a team logo", "team": team.id})
    accepted = await owner.receive_json_from(timeout=10)
    assert accepted["type"] == "job.accepted"
    job = accepted["id"]
    await owner.receive_json_from(timeout=10)  # job.started is stored: the job is under way

    member = await connect(bob.user)
    await member.send_json_to({"action": "subscribe", "job": job, "after": 0})
    outsider = await connect(carol.user)
    await outsider.send_json_to({"action": "subscribe", "job": job, "after": 0})

    seen = await collect_until(member, END)
    assert seen[0]["seq"] == 1 and seen[-1]["type"] == "job.completed"
    assert [e["seq"] for e in seen] == list(range(1, len(seen) + 1))  # replay then live, no gap, no repeat
    answer = await outsider.receive_json_from(timeout=5)
    assert answer == {"type": "job.unknown", "id": job, "data": {}}
    assert await outsider.receive_nothing(timeout=0.5)

    for socket in (owner, member, outsider):
        await socket.disconnect()
    await settle()
    generation = await Generation.objects.aget(id=job)
    assert generation.team_id == team.id
    outputs = [a async for a in Asset.objects.filter(generation_id=job, is_draft=False)]
    assert outputs and all(a.team_id == team.id and a.visibility == Visibility.TEAM for a in outputs)


async def test_a_viewer_cannot_save_into_the_team(alice, make_account):
    bob = await sync_to_async(make_account)("bob")
    team = await make_team(bob=Role.VIEWER)
    socket = await connect(bob.user)
    await socket.send_json_to({"action": "generate", "ref": "v", "model": "kappa-image-1", "prompt": "p",
                               "team": team.id})
    answer = await socket.receive_json_from(timeout=5)
    assert answer["type"] == "job.rejected" and answer["data"]["param"] == "team"
    await socket.disconnect()


async def test_a_personal_job_is_not_visible_to_the_owners_team(alice, make_account):
    bob = await sync_to_async(make_account)("bob")
    await make_team(alice=Role.OWNER, bob=Role.ADMIN)
    owner = await connect(alice.user)
    await owner.send_json_to({"action": "generate", "ref": "p", "model": "delta-3.1-flash-lite-image",
                              "prompt": "my own sketch"})
    job = (await collect_until(owner, END))[0]["id"]
    member = await connect(bob.user)
    await member.send_json_to({"action": "subscribe", "job": job, "after": 0})
    assert (await member.receive_json_from(timeout=5))["type"] == "job.unknown"
    await owner.disconnect()
    await member.disconnect()
    await settle()
