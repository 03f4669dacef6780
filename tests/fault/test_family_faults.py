"""Upstream faults on the images, native and video families: a vendor that answers 500, 429 (with
``retry-after``), cuts the connection mid-body, hangs before the first byte, answers a body that is
not JSON, or refuses the connection. The client gets the family's typed error (never a 200 hiding
the failure, never the sandbox's answer instead), no 5xx but the mapped 502/503/504, and nothing is
charged for the failed call; a video create that failed leaves no task behind.
"""

from __future__ import annotations

import asyncio

import orjson
import pytest

from tests.fault import tally
from tests.fault.conftest import is_family_error, use_mode

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.fault]

MODES = ("500", "429", "cut", "hang", "malformed", "refuse")  # "429" carries retry-after: 1
MAPPED = {502, 503, 504}
NATIVE_BODY = {"contents": [{"parts": [{"text": "a red hat"}]}]}


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def native_key(secret: str) -> dict[str, str]:
    return {"x-delta-api-key": secret}


# (case, upstream protocol, its base path, platform model, route, body, family, auth headers)
CASES = [
    ("openai images", "openai", "/v1", "kappa-image-1", "/v1/images/generations",
     {"model": "kappa-image-1", "prompt": "a red hat"}, "openai", bearer),
    ("seedream images", "ark", "/api/v3", "sigma-5.0-image", "/v1/images/generations",
     {"model": "sigma-5.0-image", "prompt": "a red hat"}, "openai", bearer),
    ("native buffered", "gemini", "/v1beta", "delta-3.1-flash-image",
     "/v1/models/delta-3.1-flash-image:generateContent", NATIVE_BODY, "native", native_key),
    ("native streamed", "gemini", "/v1beta", "delta-3.1-flash-image",
     "/v1/models/delta-3.1-flash-image:streamGenerateContent?alt=sse", NATIVE_BODY, "native", native_key),
    ("video protocol A", "ark", "/api/v3", "alpha-2.0-fast", "/v1/alpha/video/generations",
     {"model": "alpha-2.0-fast", "content": [{"type": "text", "text": "tide"}]}, "ark", bearer),
    ("video protocol B", "dashscope", "/api/v1", "beta2.7-t2v", "/v1/beta/video/generations",
     {"model": "beta2.7-t2v", "input": {"prompt": "tide"}}, "dashscope", bearer),
    ("video protocol C", "ark", "/api/v3", "alpha-2.0-fast", "/v1/video/generations",
     {"model": "alpha-2.0-fast", "prompt": "tide"}, "openai", bearer),
]


def _stream_error(text: str, family: str) -> bool:
    """Whether a 200 stream carries only the family's error (the failure came after the headers)."""
    frames = [line[6:] for line in text.split("\n") if line.startswith("data: ") and line[6:].startswith("{")]
    return bool(frames) and is_family_error(family, orjson.loads(frames[-1])) and "inlineData" not in text


async def _asked(vendor, seen: int) -> bool:
    """Whether the vendor read a new request (its thread may lag behind on a busy machine)."""
    for _ in range(40):
        if len(vendor.requests) > seen:
            return True
        await asyncio.sleep(0.05)
    return False


def _verdict(mode: str, response, body: object, family: str, streamed: bool) -> str:
    status, text = response.status_code, response.text
    if status == 200 and streamed and _stream_error(text, family):
        return ""
    if status < 400:
        return f"{status}: the failure was hidden"
    if status >= 500 and status not in MAPPED:
        return f"{status}: not one of the family's mapped upstream errors"
    if status not in MAPPED and not (mode == "429" and status == 429):
        return f"{status}: not an upstream error"
    if not is_family_error(family, body):
        return f"{status}: not the family's error body"
    if status == 429 and "retry-after" not in response.headers:
        return "429 without the vendor's retry-after"
    return ""


GROUPS = {"images": CASES[:2], "native": CASES[2:4], "video": CASES[4:]}


@pytest.mark.parametrize("group", GROUPS)
async def test_each_upstream_fault_is_the_familys_typed_error_and_charges_nothing(client, alice, faulty_upstream,
                                                                                  group):
    from studio.gateway import recording
    from studio.models import UsageRecord, VideoTask

    vendors = {}  # one vendor per upstream protocol and model (two would fail over to each other)
    failures = []
    for case, protocol, path, model, route, body, family, headers in GROUPS[group]:
        if (protocol, model) not in vendors:
            vendors[protocol, model] = faulty_upstream(protocol, path, {model: f"vendor-{model}"})
        vendor, row = vendors[protocol, model]
        for mode in MODES:
            await use_mode(row, vendor, mode, path)
            seen = len(vendor.requests)
            response = await client.post(route, json=body, headers=headers(alice.secret))
            tally.add("fault scenarios")
            tally.add("requests tried")
            if response.status_code >= 500 and response.status_code not in MAPPED:
                tally.add("unexpected 5xx")
            try:
                parsed = response.json()
            except ValueError:
                parsed = None
            problem = _verdict(mode, response, parsed, family, "stream" in route)
            if mode != "refuse" and not await _asked(vendor, seen):
                problem = problem or f"{response.status_code}: the vendor was never asked"
            if problem:
                failures.append(f"{case} {mode}: {problem} {response.text[:200]}")
    await recording.drain()
    charged = [(r.route, r.status_code, r.cost_usd) async for r in UsageRecord.objects.filter(cost_usd__gt=0)]
    assert not failures, "\n".join(failures)
    assert charged == [], charged  # a failed call costs nothing
    assert not await VideoTask.objects.aexists()  # a create that failed leaves no task to poll
