"""Live events: their shape, their groups, publishing through the channel layer, rejections."""

from __future__ import annotations

import asyncio

import pytest
from channels.layers import get_channel_layer

from studio.core.errors import BadRequest
from studio.gateway import live


def test_event_shape_and_groups():
    assert live.make_event("job.text", "j1", 3, {"text": "hi"}) == {"type": "job.text", "id": "j1", "seq": 3,
                                                                   "data": {"text": "hi"}}
    assert live.job_group("abc") == "job.abc" and live.user_group(7) == "user.7"


async def test_publish_reaches_the_groups_members():
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(live.job_group("j9"), channel)
    event = live.make_event("job.started", "j9", 1, {})
    await live.publish(live.job_group("j9"), event)
    message = await asyncio.wait_for(layer.receive(channel), 2)
    assert message == {"type": "studio.event", "event": event}
    await live.publish(live.job_group("other"), event)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(layer.receive(channel), 0.2)


async def test_publish_without_a_channel_layer_is_a_no_op(monkeypatch):
    monkeypatch.setattr(live, "get_channel_layer", lambda: None)
    await live.publish("job.x", {"type": "t"})


def test_rejection_names_the_field():
    exc = BadRequest("Write a prompt first.", param="prompt")
    assert live.rejection("ref-1", exc, "kappa-image-1") == {
        "type": "job.rejected", "ref": "ref-1",
        "data": {"message": "Write a prompt first.", "param": "prompt", "model": "kappa-image-1"}}
