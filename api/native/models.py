"""The model list in Gemini's shape: ``GET /v1beta/models`` and ``/v1beta/models/{model}``.

Also what ``GET /v1/models`` answers when it is called the native way (a native key header or
``?key=``), so the official Gemini client can list and look up models with its defaults. Only
models a native route accepts are listed, with the methods those routes offer.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse

from api.auth import native_key, principal_for
from api.body import json_response
from api.errors import NATIVE
from api.headers import header
from api.openapi import NATIVE_KEYS
from api.routing import FamilyRouter
from studio.core.entries import ModelEntry
from studio.core.errors import BadRequest, NotFound
from studio.gateway import snapshot

router = FamilyRouter(NATIVE, security=NATIVE_KEYS, tags=["native images"])

# The generation methods each native route offers, in Gemini's words.
METHODS = {"native": ("generateContent", "streamGenerateContent", "countTokens"),
           "native.embed": ("embedContent", "batchEmbedContents")}
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 1000


def called_natively(request: HttpRequest) -> bool:
    """Whether a ``/v1/models`` call came from a native client (its key header or ``?key=``)."""
    return bool(header(request, "x-goog-api-key") or header(request, "x-delta-api-key")
                or request.GET.get("key"))


def methods_of(model: ModelEntry) -> list[str]:
    return [method for route, methods in METHODS.items() if route in model.routes for method in methods]


def gemini_model(model: ModelEntry) -> dict[str, Any]:
    caps = model.capabilities
    embeds = "native.embed" in model.routes and "native" not in model.routes
    entry: dict[str, Any] = {
        "name": f"models/{model.model_id}",
        "baseModelId": model.model_id,
        "version": str(caps.get("version") or "001"),
        "displayName": model.display_name or model.model_id,
        "description": model.description or f"{model.display_name or model.model_id} ({model.kind})",
        "inputTokenLimit": int(caps.get("input_token_limit") or (2048 if embeds else 32768)),
        "outputTokenLimit": int(caps.get("output_token_limit") or (1 if embeds else 32768)),
        "supportedGenerationMethods": methods_of(model),
    }
    if not embeds:
        entry.update(temperature=1.0, maxTemperature=2.0, topP=0.95, topK=64)
    return entry


def _page(request: HttpRequest) -> tuple[int, int]:
    try:
        size = int(request.GET.get("pageSize") or DEFAULT_PAGE_SIZE)
        start = int(request.GET.get("pageToken") or 0)
    except ValueError:
        raise BadRequest("pageSize and pageToken must be the values this list gave", param="pageToken") from None
    if size < 1 or start < 0:
        raise BadRequest("pageSize must be positive", param="pageSize")
    return min(size, MAX_PAGE_SIZE), start


async def list_models(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(native_key(request))
    size, start = _page(request)
    snap = await snapshot.get()
    usable = [m for m in snap.models.values() if principal.may_use(m.model_id) and methods_of(m)]
    page = usable[start:start + size]
    body: dict[str, Any] = {"models": [gemini_model(m) for m in page]}
    if start + size < len(usable):
        body["nextPageToken"] = str(start + size)
    return json_response(body)


async def get_model(request: HttpRequest, model: str) -> HttpResponse:
    principal = await principal_for(native_key(request))
    name = model.removeprefix("models/")
    entry = (await snapshot.get()).models.get(name)
    if entry is None or not principal.may_use(name) or not methods_of(entry):
        raise NotFound(f"models/{name} is not found for API version v1beta", param="model", code="model_not_found")
    return json_response(gemini_model(entry))


@router.get("/models", summary="List models (Gemini shape)")
async def native_list_models(request: HttpRequest) -> HttpResponse:
    return await list_models(request)


@router.get("/models/{model}", summary="Retrieve a model (Gemini shape)")
async def native_get_model(request: HttpRequest, model: str) -> HttpResponse:
    return await get_model(request, model)
