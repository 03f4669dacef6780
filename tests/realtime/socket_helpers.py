"""Driving the studio socket in tests: connect as a user, collect events until a job ends."""

from __future__ import annotations

from channels.testing import WebsocketCommunicator

END = {"job.completed", "job.failed"}


async def connect(user) -> WebsocketCommunicator:
    from channels.routing import URLRouter

    from studio.realtime.routing import websocket_urlpatterns

    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), "/ws/studio/")
    communicator.scope["user"] = user
    connected, _ = await communicator.connect()
    assert connected
    return communicator


async def collect_until(communicator, kinds: set[str], timeout: float = 30) -> list[dict]:
    events = []
    while True:
        event = await communicator.receive_json_from(timeout=timeout)
        events.append(event)
        if event["type"] in kinds:
            return events


async def run_job(communicator, message: dict) -> tuple[str, list[dict]]:
    """Send one ``generate`` and return the job id and its events (accepted first, then seq order)."""
    await communicator.send_json_to({"action": "generate", "ref": "t", **message})
    events = await collect_until(communicator, END | {"job.rejected"})
    assert events[0]["type"] == "job.accepted", events
    return events[0]["id"], events


def of_kind(events: list[dict], kind: str) -> list[dict]:
    return [e for e in events if e["type"] == kind]
