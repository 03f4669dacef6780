"""The sandbox app serves the modules the provider registry names (given at start-up)."""

from __future__ import annotations

import re

from studio.providers.registry import sandbox_modules
from studio.sandbox.app import application


def test_the_app_is_given_every_registered_vendors_modules():
    assert application.modules == sandbox_modules()
    assert {"gemini", "gemini_embeddings", "openai_images", "openai_text", "openai_responses", "openai_embeddings",
            "ark_images", "ark_tasks", "dashscope", "anthropic"} == set(application.modules)


async def test_a_big_streamed_event_leaves_in_network_sized_pieces(monkeypatch):
    """As from a socket, a streamed picture's event reaches the client in reads of at most
    ``WIRE_PIECE``, which joined are the event; a small event stays one message."""
    from studio.sandbox import app as sandbox_app

    big = b"data: " + b"A" * 200_000 + b"\r\n\r\n"
    small = b"data: {}\r\n\r\n"

    async def events():
        yield small
        yield big

    async def handler(request):
        return sandbox_app.sse_response(events())

    monkeypatch.setattr(sandbox_app, "_routes", [("POST", re.compile(r"/stream$"), handler)])
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/stream", "query_string": b"", "headers": []}
    await application(scope, receive, send)
    bodies = [m["body"] for m in sent if m["type"] == "http.response.body"]
    assert bodies[0] == small and b"".join(bodies[1:]) == big
    assert len(bodies) == 2 + 4 and max(len(b) for b in bodies) <= sandbox_app.WIRE_PIECE
