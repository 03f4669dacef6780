"""Responses the gateway keeps: ``GET``/``DELETE /v1/responses/{id}`` and ``…/input_items``.

A responses call that does not say ``store: false`` is kept once its final response object is
known (buffered answer, or the stream's ``response.completed``/``.incomplete``/``.failed``),
with the input items it was made from. The write goes through the recorder, off the response
path; reading is not on a generation's hot path. Only the user whose key made a response sees
it: anyone else gets the same 404 as for an id that never existed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async

from studio.core.errors import BadRequest, NotFound
from studio.core.principal import Principal
from studio.gateway import recording
from studio.gateway.text.translation import Context

ITEM_ORDERS = ("asc", "desc")
MAX_ITEMS_PAGE = 100


def wants_store(body: dict[str, Any]) -> bool:
    return body.get("store") is not False


def input_items(body: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    """The request's ``input`` as the items ``input_items`` lists (each with an id)."""
    value = body.get("input")
    if isinstance(value, str):
        value = [{"type": "message", "role": "user", "content": value}]
    items: list[dict[str, Any]] = []
    for n, item in enumerate(value if isinstance(value, list) else ()):
        if not isinstance(item, dict):
            continue
        item = dict(item)
        kind = item.setdefault("type", "message")
        if kind == "message":
            content = item.get("content")
            if isinstance(content, str):
                text_type = "output_text" if item.get("role") == "assistant" else "input_text"
                item["content"] = [{"type": text_type, "text": content}]
            item.setdefault("status", "completed")
        item.setdefault("id", ctx.id(f"{'msg' if kind == 'message' else 'item'}_in{n}_"))
        items.append(item)
    return items


@dataclass(slots=True)
class ResponseRecord:
    """The write of one stored response (runs in the recorder's worker thread)."""

    principal: Principal
    model_id: str
    response: dict[str, Any]
    items: list[dict[str, Any]]

    def persist(self) -> None:
        from studio.models import StoredResponse

        StoredResponse.objects.update_or_create(
            id=str(self.response.get("id")),
            defaults={"user_id": self.principal.user_id, "api_key_id": self.principal.key_id,
                      "model_id": self.model_id, "response": self.response, "input_items": self.items})


def keep(principal: Principal, model_id: str, body: dict[str, Any], ctx: Context, response: dict[str, Any]) -> None:
    """Store a final response object, unless the request said ``store: false``."""
    if wants_store(body) and isinstance(response.get("id"), str):
        recording.submit(ResponseRecord(principal, model_id, response, input_items(body, ctx)))


def _row(principal: Principal, response_id: str):
    from studio.models import StoredResponse

    return StoredResponse.objects.filter(id=response_id, user_id=principal.user_id).first()


async def _find(principal: Principal, response_id: str):
    row = await sync_to_async(_row)(principal, response_id)
    if row is None:
        await recording.drain()  # written by this process a moment ago, maybe still queued
        row = await sync_to_async(_row)(principal, response_id)
    if row is None:
        raise NotFound(f"Response with id '{response_id}' not found.", param="response_id")
    return row


async def retrieve(principal: Principal, response_id: str) -> dict[str, Any]:
    return (await _find(principal, response_id)).response


async def delete(principal: Principal, response_id: str) -> dict[str, Any]:
    row = await _find(principal, response_id)
    await sync_to_async(row.delete)()
    return {"id": response_id, "object": "response.deleted", "deleted": True}


async def list_input_items(principal: Principal, response_id: str, *, limit: int = 20, order: str = "desc",
                           after: str | None = None) -> dict[str, Any]:
    """A page of the input items in OpenAI's cursor list shape."""
    if order not in ITEM_ORDERS:
        raise BadRequest("'order' must be 'asc' or 'desc'", param="order")
    if not 1 <= limit <= MAX_ITEMS_PAGE:
        raise BadRequest(f"'limit' must be between 1 and {MAX_ITEMS_PAGE}", param="limit")
    items = list((await _find(principal, response_id)).input_items)
    if order == "desc":
        items.reverse()
    if after is not None:
        ids = [item.get("id") for item in items]
        if after not in ids:
            raise BadRequest(f"'after' names no input item of response '{response_id}'", param="after")
        items = items[ids.index(after) + 1:]
    page = items[:limit]
    return {"object": "list", "data": page, "first_id": page[0]["id"] if page else None,
            "last_id": page[-1]["id"] if page else None, "has_more": len(items) > limit}
