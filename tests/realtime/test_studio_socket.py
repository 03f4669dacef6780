"""The studio WebSocket: start a job, see its frames, catch up after a reconnect, stay private."""

from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator

from studio.asgi import application
from studio.gateway import recording
from tests.realtime.socket_helpers import collect_until, connect

pytestmark = pytest.mark.django_db(transaction=True)


async def test_generate_streams_text_and_image_events(alice):
    communicator = await connect(alice.user)
    await communicator.send_json_to({"action": "generate", "ref": "r1", "model": "delta-3-pro-image",
                                     "prompt": "an orange sunset over the sea",
                                     "options": {"aspect_ratio": "16:9", "image_size": "1K"}})
    events = await collect_until(communicator, {"job.completed", "job.failed"})
    accepted = events[0]
    assert accepted["type"] == "job.accepted" and accepted["ref"] == "r1"
    job_events = [e for e in events if e.get("id") == accepted["id"] and e["type"] != "job.accepted"]
    seqs = [e["seq"] for e in job_events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs) and seqs[0] == 1
    kinds = [e["type"] for e in job_events]
    assert kinds[0] == "job.started" and kinds[-1] == "job.completed"
    assert any(e["type"] == "job.text" and e["data"]["thought"] for e in job_events)
    finals = [e for e in job_events if e["type"] == "job.image" and not e["data"]["thought"]]
    assert len(finals) == 1 and finals[0]["data"]["width"] == 1376
    assert finals[0]["data"]["url"].startswith("/assets/")
    assert job_events[-1]["data"]["images"] == 1
    await communicator.disconnect()
    await recording.drain()


async def finished_job(user, prompt: str) -> tuple[str, list[dict]]:
    """Run a quick job on its own socket; its id and its events with a seq, in order."""
    socket = await connect(user)
    await socket.send_json_to({"action": "generate", "ref": "r", "model": "delta-3.1-flash-lite-image",
                               "prompt": prompt})
    events = await collect_until(socket, {"job.completed"})
    await socket.disconnect()
    job = events[0]["id"]
    return job, [e for e in events if e.get("id") == job and e.get("seq")]


async def test_reconnect_catches_up_from_the_record(alice):
    job, seen = await finished_job(alice.user, "a small boat")
    # A second device (or the same page after a reconnect) asks for what came after seq 2.
    second = await connect(alice.user)
    await second.send_json_to({"action": "subscribe", "job": job, "after": 2})
    replay = await collect_until(second, {"job.completed"})
    assert [e["seq"] for e in replay] == [e["seq"] for e in seen if e["seq"] > 2]
    await second.disconnect()
    await recording.drain()


async def test_other_users_cannot_follow_a_job(alice, make_account):
    bob = make_account("bob")
    owner = await connect(alice.user)
    await owner.send_json_to({"action": "generate", "ref": "r", "model": "delta-3.1-flash-lite-image",
                              "prompt": "a secret plan"})
    job = (await collect_until(owner, {"job.completed"}))[0]["id"]
    intruder = await connect(bob.user)
    await intruder.send_json_to({"action": "subscribe", "job": job, "after": 0})
    answer = await intruder.receive_json_from(timeout=5)
    assert answer["type"] == "job.unknown"
    assert await intruder.receive_nothing(timeout=0.3)
    await owner.disconnect()
    await intruder.disconnect()
    await recording.drain()


async def test_bad_request_is_rejected_with_the_field(alice):
    communicator = await connect(alice.user)
    await communicator.send_json_to({"action": "generate", "ref": "x", "model": "delta-3.1-flash-lite-image",
                                     "prompt": "p", "options": {"image_size": "4K"}})
    answer = await communicator.receive_json_from(timeout=5)
    assert answer["type"] == "job.rejected" and "imageSize" in answer["data"]["message"]
    await communicator.disconnect()


async def test_anonymous_socket_is_refused(catalog):
    from django.contrib.auth.models import AnonymousUser

    communicator = WebsocketCommunicator(application, "/ws/studio/")
    communicator.scope["user"] = AnonymousUser()
    connected, code = await communicator.connect()
    assert not connected
    await communicator.disconnect()  # the refused connection's application ends, its layer reader with it


async def test_an_event_both_replayed_and_delivered_live_reaches_the_page_once(alice):
    from studio.gateway.live import job_group, make_event, publish

    job, stored = await finished_job(alice.user, "a red kite")
    follower = await connect(alice.user)
    await follower.send_json_to({"action": "subscribe", "job": job, "after": 0})
    replay = await collect_until(follower, {"job.completed"})
    assert [e["seq"] for e in replay] == [e["seq"] for e in stored]
    # The same events published after the socket joined the job's group (a job still running while
    # the page subscribes) are not shown a second time; a newer one is.
    for event in stored[:2]:
        await publish(job_group(job), event)
    newer = make_event("job.text", job, stored[-1]["seq"] + 1, {"text": "later", "thought": False})
    await publish(job_group(job), newer)
    assert (await follower.receive_json_from(timeout=5)) == newer
    assert await follower.receive_nothing(timeout=0.3)
    await follower.disconnect()
    await recording.drain()
