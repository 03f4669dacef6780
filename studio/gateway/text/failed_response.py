"""The ``response.failed`` object of a responses stream that broke after it started."""

from __future__ import annotations

from typing import Any

import orjson

from studio.gateway.text import stored
from studio.gateway.text.engine import TextCall
from studio.gateway.text.responses_to_chat import response_object


def failed_response(call: TextCall, code: str, message: str) -> dict[str, Any]:
    """The ``response.failed`` object of a stream that broke after it started: the id its
    ``response.created`` announced, the error, and stored like any final response."""
    failed = response_object(call.ctx, "failed", [], None)
    announced = announced_id(call.created)
    if announced:
        failed["id"] = announced
    failed["error"] = {"code": code, "message": message}
    stored.keep(call.principal, call.model.model_id, call.body, call.ctx, failed, call.context)
    return failed


def announced_id(created: bytes) -> str | None:
    """The id a stream's ``response.created`` event announced (None: no such event, or no id)."""
    try:
        response = (orjson.loads(created) or {}).get("response") if created else None
    except (orjson.JSONDecodeError, AttributeError):  # no JSON, or no object
        return None
    return str(response.get("id") or "") or None if isinstance(response, dict) else None
