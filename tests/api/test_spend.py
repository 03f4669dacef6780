"""Spend on the wire: cost headers and final events, rate-limit headers, and each family's 429
when a budget or a limit stops a call; 50 concurrent streams against one budget."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import orjson
import pytest

from studio.gateway import admission, recording
from tests.api.video.video_support import fast_video, poll_until_terminal  # noqa: F401
from tests.gateway.spend_support import backend  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)

CHAT = "/v1/chat/completions"
OMICRON_IN, OMICRON_OUT = Decimal("0.15"), Decimal("0.60")  # the seeded price per million tokens


def bearer(account) -> dict[str, str]:
    return {"Authorization": f"Bearer {account.secret}"}


def chat_body(text: str = "tell me about otters", **fields) -> dict:
    return {"model": "omicron-4-mini", "messages": [{"role": "user", "content": text}], **fields}


async def settled() -> None:
    await recording.drain()
    await admission.drain()


def token_cost(prompt: int, completion: int) -> Decimal:
    return (prompt * OMICRON_IN + completion * OMICRON_OUT) / 1_000_000


async def test_buffered_answer_carries_its_cost_and_the_record_stores_it(client, alice):
    from studio.models import UsageRecord

    response = await client.post(CHAT, headers=bearer(alice), json=chat_body())
    assert response.status_code == 200, response.text
    usage = response.json()["usage"]
    expected = token_cost(usage["prompt_tokens"], usage["completion_tokens"])
    assert Decimal(response.headers["x-studio-cost-usd"]) == expected > 0
    await settled()
    row = await UsageRecord.objects.aget(api_key_id=alice.key.id)
    assert row.cost_usd == expected


async def test_price_change_does_not_rewrite_past_costs(client, alice):
    from django.utils import timezone

    from studio.models import Price, UsageRecord

    first = await client.post(CHAT, headers=bearer(alice), json=chat_body())
    await settled()
    await Price.objects.acreate(model_id="omicron-4-mini", effective_from=timezone.now(),
                                input_per_million=Decimal(150), output_per_million=Decimal(600))
    second = await client.post(CHAT, headers=bearer(alice), json=chat_body())
    await settled()
    old, new = Decimal(first.headers["x-studio-cost-usd"]), Decimal(second.headers["x-studio-cost-usd"])
    assert new == old * 1000
    assert sorted([r.cost_usd async for r in UsageRecord.objects.all()]) == [old, new]


async def test_streams_carry_the_cost_in_their_final_usage_event(client, alice):
    response = await client.post(CHAT, headers=bearer(alice), json=chat_body(
        stream=True, stream_options={"include_usage": True}))
    chunks = [orjson.loads(line[6:]) for line in response.text.split("\n")
              if line.startswith("data: {")]
    usage = chunks[-1]["usage"]
    assert usage["cost_usd"] == pytest.approx(float(token_cost(usage["prompt_tokens"], usage["completion_tokens"])))

    messages = await client.post("/v1/messages", headers={**bearer(alice), "anthropic-version": "2023-06-01"},
                                 json={**chat_body(stream=True), "model": "epsilon-4.5", "max_tokens": 64})
    events = [line for line in messages.text.split("\n") if line.startswith("data: ")]
    delta = next(orjson.loads(e[6:]) for e in events if b'"message_delta"' in e.encode())
    assert delta["usage"]["cost_usd"] > 0


async def test_responses_stream_carries_the_cost_in_response_completed(client, alice):
    from studio.models import UsageRecord

    response = await client.post("/v1/responses", headers=bearer(alice),
                                 json={"model": "omicron-4-mini", "input": "tell me about otters", "stream": True})
    events = sse(response.text)
    name, completed = events[-1]
    assert name == "response.completed"
    usage = completed["response"]["usage"]
    expected = token_cost(usage["input_tokens"], usage["output_tokens"])
    assert usage["cost_usd"] == pytest.approx(float(expected)) and expected > 0
    assert all("cost_usd" not in orjson.dumps(data).decode() for _, data in events[:-1])
    await settled()
    assert (await UsageRecord.objects.aget(api_key_id=alice.key.id)).cost_usd == expected


async def test_images_stream_carries_the_cost_in_its_completed_event(client, alice):
    from studio.models import Generation

    response = await client.post("/v1/images/generations", headers=bearer(alice), json={
        "model": "kappa-image-1", "prompt": "a blue whale", "stream": True, "quality": "low", "size": "1024x1024"})
    assert response.status_code == 200, response.text
    name, completed = sse(response.text)[-1]
    assert name == "image_generation.completed"
    assert completed["usage"]["cost_usd"] == pytest.approx(0.011)  # one low-quality 1024x1024 image
    assert completed["usage"]["total_tokens"] > 0
    await settled()
    assert (await Generation.objects.aget(user=alice.user)).cost_usd == Decimal("0.011")


@pytest.mark.parametrize("stream", [False, True], ids=["buffered", "streamed"])
async def test_an_auto_size_is_priced_as_the_size_the_vendor_made(client, alice, stream):
    from studio.models import Generation

    response = await client.post("/v1/images/generations", headers=bearer(alice), json={
        "model": "kappa-image-1", "prompt": "a blue whale", "quality": "low", "stream": stream})  # size: auto
    assert response.status_code == 200, response.text
    if stream:
        name, completed = sse(response.text)[-1]
        assert completed["usage"]["cost_usd"] == pytest.approx(0.011)
    else:
        assert response.json()["size"] == "1024x1024"  # the vendor's choice, which it bills
        assert response.headers["x-studio-cost-usd"] == "0.011"  # not the catch-all price of an unknown size
    await settled()
    assert (await Generation.objects.aget(user=alice.user)).cost_usd == Decimal("0.011")


async def test_layered_images_stream_carries_the_cost_in_its_completed_event(client, alice):
    response = await client.post("/v1/images/generations", headers=bearer(alice), json={
        "model": "sigma-5.0-image", "prompt": "three images of a growing flower", "size": "1K", "stream": True,
        "sequential_image_generation": "auto", "sequential_image_generation_options": {"max_images": 2}})
    assert response.status_code == 200, response.text
    name, completed = sse(response.text)[-1]
    assert name == "image_generation.completed"
    made = completed["usage"]["generated_images"]
    assert made == 2 and completed["usage"]["cost_usd"] == pytest.approx(0.03 * made)  # per 1K image


async def test_native_stream_carries_the_cost_in_its_final_usage_metadata(client, alice):
    from studio.models import UsageRecord

    response = await client.post("/v1/models/delta-3.1-flash-image:streamGenerateContent?alt=sse",
                                 headers={"x-goog-api-key": alice.secret},
                                 json={"contents": [{"role": "user", "parts": [{"text": "a paper boat"}]}]})
    assert response.status_code == 200, response.text
    frames = [data for _, data in sse(response.text)]
    priced = [f for f in frames if "costUsd" in f.get("usageMetadata", {})]
    assert priced == frames[-1:]  # only the final frame, the one with the finishReason
    usage = priced[0]["usageMetadata"]
    prompt, total = usage["promptTokenCount"], usage["totalTokenCount"]
    expected = (prompt * Decimal("0.50") + (total - prompt) * Decimal("60.00")) / 1_000_000  # the seeded price
    assert usage["costUsd"] == pytest.approx(float(expected)) and expected > 0
    await settled()
    assert (await UsageRecord.objects.aget(api_key_id=alice.key.id)).cost_usd == expected


def sse(text: str) -> list[tuple[str | None, dict]]:
    """The JSON events of a stream, as (event name, data)."""
    events, name = [], None
    for line in text.split("\n"):
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: {"):
            data = orjson.loads(line[6:])
            events.append((name or data.get("type"), data))
            name = None
    return events


async def test_failed_call_costs_nothing(client, alice):
    response = await client.post(CHAT, headers=bearer(alice), json=chat_body(max_tokens=-3))
    assert response.status_code == 400
    assert response.headers["x-studio-cost-usd"] == "0"


async def budget_for(account, usd: str, period: str = "day"):
    from studio.models import Budget

    return await Budget.objects.acreate(api_key=account.key, limit_usd=Decimal(usd), period=period)


async def test_budget_refusal_in_each_family(client, alice, backend, fast_video):  # noqa: F811
    await budget_for(alice, "0")
    chat = await client.post(CHAT, headers=bearer(alice), json=chat_body())
    assert chat.status_code == 429
    error = chat.json()["error"]
    assert error["type"] == error["code"] == "insufficient_quota"
    assert "budget of key" in error["message"] and "resets at" in error["message"]
    assert int(chat.headers["retry-after"]) > 0 and chat.headers["x-studio-cost-usd"] == "0"

    messages = await client.post("/v1/messages", headers={**bearer(alice), "anthropic-version": "2023-06-01"},
                                 json={**chat_body(), "model": "epsilon-4.5", "max_tokens": 64})
    assert messages.status_code == 429
    assert messages.json()["error"]["type"] == "rate_limit_error"

    native = await client.post("/v1/models/delta-3.1-flash-image:generateContent",
                               headers={"x-delta-api-key": alice.secret},
                               json={"contents": [{"parts": [{"text": "a fox"}]}]})
    assert native.status_code == 429
    assert native.json()["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert native.json()["error"]["details"][0]["retryDelay"].endswith("s")

    alpha = await client.post("/v1/alpha/video/generations", headers=bearer(alice), json={
        "model": "alpha-2.0-fast", "content": [{"type": "text", "text": "a boat"}], "duration": 4})
    assert alpha.status_code == 429 and alpha.json()["error"]["code"] == "SetLimitExceeded"
    assert alpha.json()["error"]["type"] == "TooManyRequests"

    beta = await client.post("/v1/beta/video/generations", headers=bearer(alice), json={
        "model": "beta3.0-video", "input": {"prompt": "lanterns"}, "parameters": {"duration": 2}})
    assert beta.status_code == 429 and beta.json()["code"] == "Throttling.AllocationQuota"


async def test_rate_limit_headers_and_429_per_family(client, alice, backend):  # noqa: F811
    from studio.models import RateLimit

    await RateLimit.objects.acreate(api_key=alice.key, rpm=2, tpm=100_000)
    first = await client.post(CHAT, headers=bearer(alice), json=chat_body(max_tokens=50))
    assert first.headers["x-ratelimit-limit-requests"] == "2"
    assert first.headers["x-ratelimit-remaining-requests"] == "1"
    assert first.headers["x-ratelimit-reset-requests"].endswith("s")
    assert first.headers["x-ratelimit-limit-tokens"] == "100000"
    assert int(first.headers["x-ratelimit-remaining-tokens"]) < 100_000
    await client.post(CHAT, headers=bearer(alice), json=chat_body(max_tokens=50))
    refused = await client.post(CHAT, headers=bearer(alice), json=chat_body(max_tokens=50))
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limit_exceeded"
    assert refused.json()["error"]["type"] == "requests"
    assert 1 <= int(refused.headers["retry-after"]) <= 120  # a sliding minute: the calls must slide out
    assert refused.headers["x-ratelimit-remaining-requests"] == "0"
    beta = await client.post("/v1/beta/video/generations", headers=bearer(alice), json={
        "model": "beta3.0-video", "input": {"prompt": "lanterns"}, "parameters": {"duration": 2}})
    assert beta.status_code == 429 and beta.json()["code"] == "Throttling.RateQuota"
    alpha = await client.post("/v1/alpha/video/generations", headers=bearer(alice), json={
        "model": "alpha-2.0-fast", "content": [{"type": "text", "text": "a boat"}], "duration": 4})
    assert alpha.json()["error"]["code"] == "RateLimitExceeded.EndpointRPMExceeded"


async def test_a_native_image_reserves_its_tokens_under_a_tokens_per_minute_limit(client, alice, backend):  # noqa: F811
    from studio.models import RateLimit

    await RateLimit.objects.acreate(api_key=alice.key, tpm=2_000)
    path, headers = "/v1/models/delta-3.1-flash-image:generateContent", {"x-delta-api-key": alice.secret}
    body = {"contents": [{"parts": [{"text": "a fox"}]}]}
    first = await client.post(path, headers=headers, json=body)
    assert first.status_code == 200, first.text
    # Reserved before the call: about the 1,290 output tokens a 1K image is billed as.
    assert int(first.headers["x-ratelimit-remaining-tokens"]) <= 2_000 - 1_290
    await settled()
    second = await client.post(path, headers=headers, json=body)  # another image's tokens do not fit
    assert second.status_code == 429, second.text
    error = second.json()["error"]
    assert error["status"] == "RESOURCE_EXHAUSTED" and "2000 tokens per minute" in error["message"]


async def test_an_images_call_reserves_its_pictures_tokens_under_a_tokens_per_minute_limit(client, alice, backend):  # noqa: F811
    from studio.models import RateLimit

    await RateLimit.objects.acreate(api_key=alice.key, tpm=5_000)
    body = {"model": "kappa-image-1", "prompt": "a fox", "size": "1024x1024", "quality": "high"}
    first = await client.post("/v1/images/generations", headers=bearer(alice), json=body)
    assert first.status_code == 200, first.text
    # Reserved before the call: the 4,160 output tokens a high-quality square picture is billed as.
    assert int(first.headers["x-ratelimit-remaining-tokens"]) <= 5_000 - 4_160
    await settled()
    second = await client.post("/v1/images/generations", headers=bearer(alice), json=body)
    assert second.status_code == 429, second.text
    error = second.json()["error"]
    assert error["code"] == "rate_limit_exceeded" and error["type"] == "tokens"
    low = await client.post("/v1/images/generations", headers=bearer(alice), json={**body, "quality": "low"})
    assert low.status_code == 200, low.text  # 272 tokens still fit


async def test_a_token_priced_model_on_the_images_route_reserves_its_cost_against_a_budget(client, alice, backend):  # noqa: F811
    await budget_for(alice, "0.05")  # one 1K picture of this model is billed about 1,290 tokens at $60 a million
    refused = await client.post("/v1/images/generations", headers=bearer(alice),
                                json={"model": "delta-3.1-flash-image", "prompt": "a fox"})
    assert refused.status_code == 429, refused.text
    assert refused.json()["error"]["code"] == "insufficient_quota"
    assert refused.headers["x-studio-cost-usd"] == "0"


async def test_video_is_charged_on_success_and_limited_in_concurrency(client, alice, backend, fast_video):  # noqa: F811
    from studio.models import RateLimit, UsageRecord, VideoTask

    await RateLimit.objects.acreate(api_key=alice.key, concurrent_videos=1)
    url = "/v1/alpha/video/generations"
    body = {"model": "alpha-2.0-fast", "content": [{"type": "text", "text": "a boat"}], "duration": 4,
            "resolution": "480p", "generate_audio": False}
    created = await client.post(url, headers=bearer(alice), json=body)
    assert created.status_code == 200, created.text
    assert created.headers["x-studio-cost-usd"] == "0"
    second = await client.post(url, headers=bearer(alice), json=body)
    assert second.status_code == 429 and "at once" in second.json()["error"]["message"]
    task_id = created.json()["id"]
    await poll_until_terminal(task_id)
    task = await VideoTask.objects.aget(id=task_id)
    assert task.status == "succeeded" and task.cost_usd == Decimal("0.03") * 4  # 480p without audio, 4 s
    query = await client.get(f"{url}/{task_id}", headers=bearer(alice))
    assert Decimal(query.headers["x-studio-cost-usd"]) == task.cost_usd
    row = await UsageRecord.objects.aget(route="video.ark")
    assert row.cost_usd == task.cost_usd and row.video_seconds == 4
    third = await client.post(url, headers=bearer(alice), json=body)  # the slot was freed
    assert third.status_code == 200, third.text


async def test_fifty_concurrent_streams_overshoot_by_at_most_the_estimates_in_flight(client, alice, backend):  # noqa: F811
    from studio.models import UsageRecord

    probe = await client.post(CHAT, headers=bearer(alice), json=chat_body(max_tokens=40))
    one = Decimal(probe.headers["x-studio-cost-usd"])
    await settled()
    await UsageRecord.objects.all().adelete()
    limit = one * 10  # room for about ten of fifty
    budget = await budget_for(alice, str(limit), period="total")
    estimate, _ = admission.text_estimate(len(orjson.dumps(chat_body(stream=True, max_tokens=40))), 40)

    async def stream() -> int:
        response = await client.post(CHAT, headers=bearer(alice), json=chat_body(stream=True, max_tokens=40))
        return response.status_code

    statuses = await asyncio.gather(*(stream() for _ in range(50)))
    await settled()
    assert statuses.count(429) > 0 and statuses.count(200) > 0
    assert set(statuses) == {200, 429}
    spent = sum([r.cost_usd async for r in UsageRecord.objects.filter(status_code=200)], Decimal(0))
    per_estimate = token_cost(estimate.input_tokens, estimate.output_tokens)
    # Every call whose estimate fit was admitted; the overshoot is bounded by the reservations.
    assert statuses.count(200) >= int(limit / per_estimate)
    assert spent <= limit + 50 * per_estimate
    assert spent <= limit  # here each estimate is an upper bound of its call, so there is none
    # Settled: every reservation was replaced by the real cost, so the counter holds what was spent.
    from studio.gateway import counters
    from studio.gateway.cost import from_nano

    (held,) = await counters.get().add([(f"b:{budget.id}:0", 0, 0)])
    assert from_nano(held) == spent
