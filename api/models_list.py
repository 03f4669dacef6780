"""``GET /v1/models`` and ``/v1/models/{model}``: the catalog from the in-process snapshot, only
what the key may use.

Called with a native key header or ``?key=``, it answers in Gemini's shape (``api.native.models``).
Called the way the messages format's SDK calls it (with ``anthropic-version``), the
list answers in that format's shape (``data[{type, id, display_name, created_at, lifecycle}]``, ``has_more``,
``first_id``, ``last_id``, paged by ``limit``/``after_id``/``before_id``) and errors in its error
body; otherwise in the OpenAI list shape.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.http import HttpRequest, HttpResponse

from api.auth import bearer_key, messages_key, principal_for
from api.body import json_response
from api.errors import MESSAGES, OPENAI
from api.headers import header
from api.native import models as native_models
from api.openapi import BEARER, MESSAGES_KEYS
from api.routing import FamilyRouter
from api.text.messages import VERSION_HEADERS, named
from studio.core.errors import BadRequest, GatewayError, NotFound
from studio.gateway import snapshot

router = FamilyRouter(OPENAI, security=BEARER + MESSAGES_KEYS[:1], tags=["models"])

MESSAGES_PAGE = 20
MESSAGES_MAX_PAGE = 1000


def _entry(model: snapshot.ModelEntry) -> dict:
    return {"id": model.model_id, "object": "model", "owned_by": model.owned_by, "created": model.created}


def _messages_entry(model: snapshot.ModelEntry) -> dict:
    created = datetime.fromtimestamp(model.created, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    entry = {"type": "model", "id": model.model_id, "display_name": model.display_name or model.model_id,
             "created_at": created, "lifecycle": "active"}
    for field, capability in (("max_input_tokens", "context_window"), ("max_tokens", "max_output_tokens")):
        if isinstance(model.capabilities.get(capability), int):
            entry[field] = model.capabilities[capability]
    return entry


def _messages_style(request: HttpRequest) -> bool:
    """The messages format's version header says who calls: its SDK sends it with every request
    (the key as ``x-api-key``, or as Bearer in current versions); OpenAI's clients never do."""
    return any(header(request, h) for h in VERSION_HEADERS)


def _limit(request: HttpRequest) -> int:
    value = request.GET.get("limit", str(MESSAGES_PAGE))
    if not value.isdigit() or not 1 <= int(value) <= MESSAGES_MAX_PAGE:
        raise BadRequest(f"limit: must be an integer between 1 and {MESSAGES_MAX_PAGE}", param="limit")
    return int(value)


def _messages_page(request: HttpRequest, models: list[snapshot.ModelEntry]) -> dict:
    """Newest first, as the vendor lists them; ``after_id``/``before_id`` are exclusive cursors."""
    models = sorted(models, key=lambda m: (-m.created, m.model_id))
    ids = [m.model_id for m in models]
    limit = _limit(request)
    for cursor in ("after_id", "before_id"):
        value = request.GET.get(cursor)
        if value is not None and value not in ids:
            raise BadRequest(f"{cursor}: no model '{value}' in this list", param=cursor)
    if request.GET.get("before_id") is not None:
        end = ids.index(request.GET["before_id"])
        page, has_more = models[max(end - limit, 0):end], end - limit > 0
    else:
        start = ids.index(request.GET["after_id"]) + 1 if request.GET.get("after_id") is not None else 0
        page, has_more = models[start:start + limit], start + limit < len(models)
    data = [_messages_entry(m) for m in page]
    return {"data": data, "has_more": has_more, "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None}


async def _usable(request: HttpRequest, key: str) -> list[snapshot.ModelEntry]:
    principal = await principal_for(key)
    snap = await snapshot.get()
    return [m for m in snap.models.values() if principal.may_use(m.model_id)]


@router.get("/models", summary="List models")
async def list_models(request: HttpRequest) -> HttpResponse:
    if native_models.called_natively(request):
        return await native_models.list_models(request)
    if _messages_style(request):
        try:
            return named(json_response(_messages_page(request, await _usable(request, messages_key(request)))))
        except GatewayError as exc:
            return MESSAGES.response(exc)
    return json_response({"object": "list", "data": [_entry(m) for m in await _usable(request, bearer_key(request))]})


@router.get("/models/{model}", summary="Retrieve a model")
async def retrieve_model(request: HttpRequest, model: str) -> HttpResponse:
    if native_models.called_natively(request):
        return await native_models.get_model(request, model)
    messages_style = _messages_style(request)
    try:
        principal = await principal_for(messages_key(request) if messages_style else bearer_key(request))
        entry = (await snapshot.get()).models.get(model)
        if entry is None or not principal.may_use(model):
            raise NotFound(f"the model '{model}' does not exist", param="model", code="model_not_found")
    except GatewayError as exc:
        if messages_style:
            return MESSAGES.response(exc)
        raise
    return named(json_response(_messages_entry(entry))) if messages_style else json_response(_entry(entry))
