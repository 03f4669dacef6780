"""Schema-driven fuzz of every /v1 operation in the OpenAPI document, plus wire-format strategies.

Cases come from ``schemathesis`` (the published OpenAPI document) and ``hypothesis``; each is sent
with a valid key through the whole ASGI stack to the sandbox upstream. Every answer must be: not a
5xx; on a 4xx, the family's error body; on a 2xx to a create route, a usage record (or a task row).
"""

from __future__ import annotations

import random

import orjson
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.fault import tally
from tests.fault.conftest import family_of, is_family_error

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.fault]

MAX_EXAMPLES = 15
MODELS = {"native": "delta-3.1-flash-image", "/v1/images": "kappa-image-1", "/v1/chat": "omicron-4-mini",
          "/v1/messages": "omicron-4-mini", "/v1/responses": "omicron-4-mini", "/v1/alpha": "alpha-2.0-fast",
          "/v1/beta": "beta2.7-t2v", "/v1/video": "alpha-2.0-fast", "/v1/models": "omicron-4-mini",
          "/v1/embeddings": "omicron-embed-3-small", "native.embed": "delta-embedding-1"}
BILLED_PREFIXES = ("/v1/models/{model}:", "/v1/images/", "/v1/chat/", "/v1/messages", "/v1/responses",
                   "/v1/embeddings")
TASK_CREATES = ("/v1/alpha/video/generations", "/v1/beta/video/generations", "/v1/video/generations")
FREE = ("/v1/models/{model}:countTokens", "/v1/messages/count_tokens")  # counting is free at every vendor


def _schema() -> schemathesis.schemas.BaseSchema:
    from api.v1 import api

    return schemathesis.openapi.from_dict(api.get_openapi_schema(path_prefix="/v1/"))


SCHEMA = None


def operations() -> list[tuple[str, str]]:
    global SCHEMA
    import django

    django.setup()
    SCHEMA = _schema()
    return [(op.ok().method.upper(), op.ok().path) for op in SCHEMA.get_all_operations()]


def draw(strategy: st.SearchStrategy, n: int) -> list:
    """``n`` examples of ``strategy`` (generation only: no shrinking, no example database)."""
    out: list = []

    @settings(max_examples=n, database=None, deadline=None, suppress_health_check=list(HealthCheck),
              phases=[Phase.generate])
    @given(strategy)
    def collect(value) -> None:
        out.append(value)

    collect()
    return out


def _model_for(path: str) -> str:
    if ":" in path:
        return MODELS["native.embed" if "mbedContent" in path else "native"]
    for prefix, model in MODELS.items():
        if path.startswith(prefix):
            return model
    return "omicron-4-mini"


def _aimed(path: str, kwargs: dict, rng: random.Random) -> dict:
    """Half the cases get the route's real model, so they reach the checks past model lookup."""
    if rng.random() < 0.5:
        return kwargs
    model = _model_for(path)
    if isinstance(kwargs.get("json"), dict):
        kwargs["json"]["model"] = model
    if "{model}" in path:
        kwargs["url"] = kwargs["url"].split("/v1/models/", 1)[0] + "/v1/models/" + model + (
            ":" + kwargs["url"].rsplit(":", 1)[1] if ":" in path else "")
    return kwargs


async def _send(client, kwargs: dict, secret: str):
    headers = {k: v for k, v in kwargs.get("headers", {}).items()
               if k.lower() not in ("authorization", "x-api-key", "x-goog-api-key", "x-delta-api-key", "connection")}
    headers["Authorization"] = f"Bearer {secret}"
    headers["x-api-key"] = secret
    params = {k: v for k, v in (kwargs.get("params") or {}).items() if k != "key"}
    body: dict = {}
    if "json" in kwargs:
        body["content"] = orjson.dumps(kwargs["json"], option=orjson.OPT_NON_STR_KEYS)
        headers["Content-Type"] = "application/json"
    elif "data" in kwargs or "files" in kwargs:
        body = {k: kwargs[k] for k in ("data", "files") if k in kwargs}
        headers.pop("Content-Type", None)
    elif "content" in kwargs:
        body["content"] = kwargs["content"]
    return await client.request(kwargs["method"], kwargs["url"].replace("http://testserver", ""), params=params,
                                headers=headers, **body)


async def _records() -> int:
    from studio.gateway import recording
    from studio.models import UsageRecord, VideoTask

    await recording.drain()
    return await UsageRecord.objects.acount() + await VideoTask.objects.acount()


@pytest.mark.parametrize(("method", "path"), operations())
async def test_fuzzed_requests_get_no_5xx_and_the_family_error_body(client, alice, method, path):
    operation = SCHEMA[path][method]
    cases = draw(operation.as_strategy(), MAX_EXAMPLES)
    rng = random.Random(f"{method} {path}")
    family = family_of(path.replace("{model}", "m"))
    failures: list[str] = []
    for case in cases:
        kwargs = _aimed(path, case.as_transport_kwargs(base_url="http://testserver"), rng)
        before = await _records()
        try:
            response = await _send(client, kwargs, alice.secret)
        except (TypeError, ValueError, AttributeError, UnicodeEncodeError):  # a case httpx itself cannot encode
            continue
        tally.add("requests tried")
        status = response.status_code
        if status >= 500:
            tally.add("unexpected 5xx")
            failures.append(f"{status} {kwargs['method']} {kwargs['url']}: {response.text[:300]}")
        elif status >= 400:
            try:
                body = response.json()
            except ValueError:
                body = None
            if not is_family_error(family, body):
                tally.add("4xx without the family's body")
                failures.append(f"{status} not a {family} error body: {response.text[:300]}")
        elif (method == "POST" and path not in FREE
              and (path.startswith(BILLED_PREFIXES) or path in TASK_CREATES)
              and await _records() <= before):
            tally.add("2xx without a usage record")
            failures.append(f"{status} without a record: {kwargs['url']}")
    assert not failures, "\n".join(failures[:10])


NATIVE_PART = st.one_of(
    st.fixed_dictionaries({"text": st.text(max_size=50)}),
    st.fixed_dictionaries({"inlineData": st.fixed_dictionaries({
        "mimeType": st.sampled_from(["image/png", "image/jpeg", "image/svg+xml", "text/plain", ""]),
        "data": st.one_of(st.text(max_size=40), st.binary(max_size=40).map(lambda b: __import__("base64")
                                                                              .b64encode(b).decode()))})}),
    st.dictionaries(st.text(max_size=8), st.none() | st.integers() | st.text(max_size=8), max_size=3),
)
NATIVE_BODY = st.fixed_dictionaries(
    {"contents": st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "model", "x"]),
                                                 "parts": st.lists(NATIVE_PART, max_size=3)}), max_size=2)},
    optional={"generationConfig": st.dictionaries(
        st.sampled_from(["responseModalities", "imageConfig", "candidateCount", "temperature"]),
        st.none() | st.integers(-5, 5) | st.text(max_size=10) | st.lists(st.text(max_size=6), max_size=2),
        max_size=3)},
)


async def test_native_wire_format_strategy(client, alice):
    failures = []
    for body in draw(NATIVE_BODY, MAX_EXAMPLES):
        response = await client.post(f"/v1/models/{MODELS['native']}:generateContent", json=body,
                                     headers={"x-goog-api-key": alice.secret})
        tally.add("requests tried")
        if response.status_code >= 500:
            tally.add("unexpected 5xx")
            failures.append(f"{response.status_code}: {body!r:.200} -> {response.text[:200]}")
        elif response.status_code >= 400 and not is_family_error("native", response.json()):
            tally.add("4xx without the family's body")
            failures.append(response.text[:200])
    assert not failures, "\n".join(failures[:10])
