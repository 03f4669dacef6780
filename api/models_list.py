"""``GET /v1/models``: the catalog from the in-process snapshot, only what the key may use."""

from __future__ import annotations

import orjson
from django.http import HttpRequest, HttpResponse
from ninja import Router

from studio.gateway import snapshot
from studio.gateway.errors import NotFound

from .auth import bearer_key, principal_for

router = Router(tags=["models"])


def _entry(model: snapshot.ModelEntry) -> dict:
    return {"id": model.model_id, "object": "model", "owned_by": model.owned_by, "created": model.created}


@router.get("/models", summary="List models")
async def list_models(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    snap = await snapshot.get()
    data = [_entry(m) for m in snap.models.values() if principal.may_use(m.model_id)]
    return HttpResponse(orjson.dumps({"object": "list", "data": data}), content_type="application/json")


@router.get("/models/{model}", summary="Retrieve a model")
async def retrieve_model(request: HttpRequest, model: str) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    entry = (await snapshot.get()).models.get(model)
    if entry is None or not principal.may_use(model):
        raise NotFound(f"the model '{model}' does not exist", param="model", code="model_not_found")
    return HttpResponse(orjson.dumps(_entry(entry)), content_type="application/json")
