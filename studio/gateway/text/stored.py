"""Responses the gateway keeps: ``GET``/``DELETE /v1/responses/{id}``, ``…/input_items`` and
``previous_response_id``.

A responses call that does not say ``store: false`` is kept once its final response object is
known (buffered answer, or the stream's ``response.completed``/``.incomplete``/``.failed``),
with the input items it was made from and the whole input its upstream was given. The write
goes through the recorder, off the response path, and may wait its linger to share a write with
other rows; a lookup that finds nothing waits that long before the miss is final, so a response
continued at once, in this process or another, is found (a single process, without Redis, answers
a miss at once). Only the user whose key made a response sees it: anyone else gets the same answer
as for an id that never existed (404 on the stored-response routes; 400
``previous_response_not_found`` as ``previous_response_id``, as the vendor answers). A response
is kept ``STUDIO_RESPONSE_RETENTION_DAYS`` (30, as the vendor keeps them): an older one is not
found, and ``prune_expired`` (a worker job) deletes it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

import orjson
from asgiref.sync import sync_to_async
from django.conf import settings
from django.utils import timezone

from studio.core.errors import BadRequest, NotFound
from studio.core.hot_settings import hot
from studio.core.principal import Principal
from studio.gateway import recording, row_writes
from studio.gateway.text.translation import Context

ITEM_ORDERS = ("asc", "desc")
UPSERTED = ("user", "api_key", "model_id", "response", "input_items", "context")  # not ``created``
JSON_COLUMNS = ("response", "input_items", "context")
MAX_ITEMS_PAGE = 100
T = TypeVar("T")
# Seconds a lookup that found nothing waits, beyond the recorder's linger, for a response another
# process may be writing (its write itself, on a busy database).
WRITE_MARGIN = 0.1


def wants_store(body: dict[str, Any]) -> bool:
    return body.get("store") is not False


def own_input(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's ``input`` as a list of input items, as sent (a string is one user message)."""
    value = body.get("input")
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


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
class ResponseRecord(recording.Record):
    """The write of one stored response (runs in the recorder's worker thread)."""

    principal: Principal
    model_id: str
    response: dict[str, Any]
    items: list[dict[str, Any]]
    context: list[dict[str, Any]] = field(default_factory=list)

    def persist(self) -> None:
        self.persist_batch([self])

    @classmethod
    def persist_batch(cls, records: list[ResponseRecord]) -> None:
        """One ``INSERT … ON CONFLICT (id) DO UPDATE`` for the batch: a response stored again
        under the same id (an upstream that repeats ids) replaces the row but keeps its
        ``created``. Of two records of one id in a batch the later one is written, as one by one.
        The JSON columns go as text encoded by orjson (``_encoded``), which the JSON fields read
        back as they read their own."""
        from studio.models import StoredResponse

        latest = {str(r.response.get("id")): r for r in records}
        rows = [{"id": rid, "user_id": r.principal.user_id, "api_key_id": r.principal.key_id, "model_id": r.model_id,
                 "response": _encoded(r.response), "input_items": _encoded(r.items), "context": _encoded(r.context)}
                for rid, r in latest.items()]
        row_writes.insert_rows(StoredResponse, rows, prepared=JSON_COLUMNS, replace=UPSERTED)


def _encoded(value: Any) -> str:
    """``value`` as the JSON text its column stores: orjson's, or the standard encoder's (the
    field's own) for what orjson does not write (an integer past 64 bits, a key that is not a
    string)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value)


def keep(principal: Principal, model_id: str, body: dict[str, Any], ctx: Context, response: dict[str, Any],
         context: list[dict[str, Any]] | None = None) -> None:
    """Store a final response object, unless the request said ``store: false``. ``context`` is the
    whole input the upstream was given (the request's own input when it continues nothing)."""
    if wants_store(body) and isinstance(response.get("id"), str):
        # Patient, as the call's usage row: it may wait the recorder's linger for others to share
        # its write. A lookup that misses it waits that long (``_looked_up``).
        recording.submit(ResponseRecord(principal, model_id, response, input_items(body, ctx),
                                        own_input(body) if context is None else context), patient=True)


def expires_before() -> datetime:
    """Responses stored before this moment have expired."""
    return timezone.now() - timedelta(days=settings.STUDIO_RESPONSE_RETENTION_DAYS)


def _live(principal: Principal):
    from studio.models import StoredResponse

    return StoredResponse.objects.filter(user_id=principal.user_id, created__gte=expires_before())


def _row(principal: Principal, response_id: str):
    return _live(principal).filter(id=response_id).first()


async def previous_turns(principal: Principal, response_id: str) -> list[dict[str, Any]]:
    """The conversation up to the end of the stored response ``response_id``: the input its
    upstream was given, then its output items; the request's own input goes after them. Its
    ``instructions`` are not carried over (the vendor does not either).

    One database query (Django's async ORM), made only for a request that names
    ``previous_response_id``; the responses calls that do not never touch the database. An id
    that is unknown, expired, or another user's is the vendor's 400 ``previous_response_not_found``.
    """
    fields = ("context", "input_items", "response")
    row = await _looked_up(lambda: _live(principal).filter(id=response_id).values(*fields).afirst())
    if row is None:
        raise BadRequest(f"Previous response with id '{response_id}' not found.", param="previous_response_id",
                         code="previous_response_not_found")
    output = row["response"].get("output") if isinstance(row["response"], dict) else None
    context = row["context"] or row["input_items"]  # rows stored before the context was kept
    return [*context, *(item for item in output or () if isinstance(item, dict))]


def _prune() -> int:
    from studio.models import StoredResponse

    deleted, _ = StoredResponse.objects.filter(created__lt=expires_before()).delete()
    return deleted


async def prune_expired() -> int:
    """Delete the stored responses older than the retention period; returns how many went."""
    return await sync_to_async(_prune)()


async def _looked_up(lookup: Callable[[], Awaitable[T | None]]) -> T | None:
    """``lookup()`` of a stored response, made again when it finds nothing, in case the response
    is still on its way: written by this process a moment ago and still queued (the recorder is
    drained, so its records are written at once), or by another web process, whose recorder may
    hold it for up to its linger (``STUDIO_RECORDER_LINGER_MS``) before writing. Web processes
    that share a deployment share Redis (``REDIS_URL``); with it, an id that is unknown is
    therefore answered that long later. Without it this process is the only one that keeps
    responses, and the miss is final once its own recorder has been drained."""
    row = await lookup()
    if row is None:
        await recording.drain()
        row = await lookup()
        if row is None and hot.REDIS_URL:
            await asyncio.sleep(settings.STUDIO_RECORDER_LINGER_MS / 1000 + WRITE_MARGIN)
            row = await lookup()
    return row


async def _find(principal: Principal, response_id: str):
    row = await _looked_up(lambda: sync_to_async(_row)(principal, response_id))
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
