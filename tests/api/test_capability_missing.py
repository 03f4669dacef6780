"""A model routed to an upstream whose protocol lacks what the route needs: a 400 in the family's
error body, before any upstream call (the vendor faked at the HTTP boundary sees nothing)."""

from __future__ import annotations

import orjson
import pytest

from studio.providers import http

pytestmark = pytest.mark.django_db(transaction=True)

BASE = "http://miswired.test"


class Recorder:
    """A vendor that should never be called: it records and answers 500."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    async def __call__(self, scope, receive, send) -> None:
        self.paths.append(scope["path"])
        await send({"type": "http.response.start", "status": 500, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": orjson.dumps({"error": {"message": "called"}})})


@pytest.fixture
def miswire(catalog):
    """Route the given models to one upstream of ``protocol`` only (the sandbox disabled)."""
    from studio.models import Upstream
    from studio.providers.asgi_transport import StreamingASGITransport

    recorder = Recorder()
    http.mount(BASE, StreamingASGITransport(recorder))

    def wire(protocol: str, *model_ids: str) -> Recorder:
        Upstream.objects.filter(name="Sandbox").update(enabled=False)
        row = Upstream(name=f"miswired {protocol}", protocol=protocol, base_url=BASE,
                       model_map={model_id: model_id for model_id in model_ids})
        row.credential = "secret"
        row.save()
        return recorder

    yield wire
    http.unmount(BASE)


# -- native ------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["generateContent", "streamGenerateContent"])
async def test_native_route_on_a_text_only_upstream(client, alice, miswire, method):
    vendor = miswire("anthropic", "delta-3.1-flash-image")
    response = await client.post(f"/v1/models/delta-3.1-flash-image:{method}",
                                 json={"contents": [{"role": "user", "parts": [{"text": "a kite"}]}]},
                                 headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == 400 and error["status"] == "INVALID_ARGUMENT"
    assert "delta-3.1-flash-image" in error["message"] and "native image generation" in error["message"]
    assert "anthropic" in error["message"]
    assert vendor.paths == []


async def test_a_native_call_no_upstream_can_make_spends_nothing_of_the_limits(client, alice, miswire):
    from studio.models import RateLimit, Upstream

    await RateLimit.objects.acreate(api_key=alice.key, rpm=1)
    miswire("anthropic", "delta-3.1-flash-image")
    path, headers = "/v1/models/delta-3.1-flash-image:generateContent", {"x-delta-api-key": alice.secret}
    body = {"contents": [{"role": "user", "parts": [{"text": "a kite"}]}]}
    assert (await client.post(path, json=body, headers=headers)).status_code == 400
    async for row in Upstream.objects.all():  # the sandbox back, the miswired upstream gone
        if row.name == "Sandbox":
            row.enabled = True
            await row.asave()
        else:
            await row.adelete()
    served = await client.post(path, json=body, headers=headers)
    assert served.status_code == 200, served.text  # the refusal did not take the minute's one call
    assert served.headers["x-ratelimit-remaining-requests"] == "0"


# -- images ------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
async def test_images_route_on_a_video_only_upstream(client, alice, miswire, stream):
    vendor = miswire("dashscope", "kappa-image-1")
    response = await client.post("/v1/images/generations",
                                 json={"model": "kappa-image-1", "prompt": "a kite", "stream": stream},
                                 headers={"Authorization": f"Bearer {alice.secret}"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["code"] == "model_not_supported" and error["param"] == "model"
    assert "the images API" in error["message"]
    assert vendor.paths == []


# -- text --------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
async def test_chat_on_an_upstream_without_text(client, alice, miswire, stream):
    vendor = miswire("ark", "omicron-4-mini")
    response = await client.post("/v1/chat/completions",
                                 json={"model": "omicron-4-mini", "stream": stream,
                                       "messages": [{"role": "user", "content": "hi"}]},
                                 headers={"Authorization": f"Bearer {alice.secret}"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "model_not_supported" and error["param"] == "model"
    assert "omicron-4-mini" in error["message"] and "text" in error["message"]
    assert vendor.paths == []


async def test_messages_on_an_upstream_without_text(client, alice, miswire):
    vendor = miswire("gemini", "epsilon-4.5")
    response = await client.post("/v1/messages",
                                 json={"model": "epsilon-4.5", "max_tokens": 32,
                                       "messages": [{"role": "user", "content": "hi"}]},
                                 headers={"x-api-key": alice.secret, "epsilon-version": "2023-06-01"})
    assert response.status_code == 400
    body = response.json()
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert "epsilon-4.5" in body["error"]["message"]
    assert vendor.paths == []


# -- video -------------------------------------------------------------------------------------

ARK_BODY = {"model": "alpha-2.0", "content": [{"type": "text", "text": "a storm over the sea"}]}


async def test_video_on_an_upstream_without_video_tasks(client, alice, miswire):
    vendor = miswire("openai", "alpha-2.0")
    response = await client.post("/v1/alpha/video/generations", json=ARK_BODY,
                                 headers={"Authorization": f"Bearer {alice.secret}"})
    assert response.status_code == 400
    error = response.json()["error"]
    # Ark names a model that cannot take the request ``InvalidParameter`` on the ``model`` field.
    assert error["code"] == "InvalidParameter" and error["param"] == "model"
    assert "video tasks" in error["message"]
    assert vendor.paths == []


async def test_ark_body_on_an_upstream_taking_another_video_format(client, alice, miswire):
    """A dashscope upstream has video tasks, but protocol A bodies pass through only to ark upstreams."""
    vendor = miswire("dashscope", "alpha-2.0")
    response = await client.post("/v1/alpha/video/generations", json=ARK_BODY,
                                 headers={"Authorization": f"Bearer {alice.secret}"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "InvalidParameter" and "/v1/alpha/video/generations" in error["message"]
    assert "dashscope" in error["message"]
    assert vendor.paths == []


async def test_generic_video_on_an_upstream_without_video_tasks(client, alice, miswire):
    vendor = miswire("anthropic", "alpha-2.0")
    response = await client.post("/v1/video/generations", json={"model": "alpha-2.0", "prompt": "a storm"},
                                 headers={"Authorization": f"Bearer {alice.secret}"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "model_not_supported"
    assert vendor.paths == []
