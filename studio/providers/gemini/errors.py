"""Gemini error bodies (reference §1.5): ``{"error": {"code", "message", "status", "details"}}``.

A 400 about the gateway's own account (bad key, billing) is an upstream error another upstream
may not have; a 429's ``RetryInfo.retryDelay`` becomes the error's ``retry_after``.
"""

from __future__ import annotations

import re

from studio.core.errors import GatewayError, RateLimited, UpstreamError, from_upstream_status
from studio.providers.base import json_body, plain_error

_RETRY_DELAY = re.compile(r"^(\d+(?:\.\d+)?)s$")
# A 400 that is about the gateway's own account, not the client's request: another upstream may work.
_ACCOUNT_REASONS = {"API_KEY_INVALID", "API_KEY_SERVICE_BLOCKED", "API_KEY_EXPIRED", "BILLING_DISABLED"}
_ACCOUNT_STATUSES = {"FAILED_PRECONDITION", "UNAUTHENTICATED"}


def map_error(status: int, body: bytes, upstream_name: str) -> GatewayError:
    error = json_body(body).get("error")
    if not isinstance(error, dict):
        return plain_error(status, body, upstream_name)
    message = str(error.get("message") or f"HTTP {status}")
    vendor_status = str(error.get("status") or "")
    details_list = error.get("details") if isinstance(error.get("details"), list) else []
    reasons = {str(d.get("reason")) for d in details_list if isinstance(d, dict) and d.get("reason")}
    details = {"upstream_status": status, "vendor_status": vendor_status}
    if status == 400 and (reasons & _ACCOUNT_REASONS or vendor_status in _ACCOUNT_STATUSES):
        # The vendor's 400 for a bad API key is about *our* credential: never the client's 400.
        return UpstreamError(f"upstream '{upstream_name}' refused the gateway's account: {message}",
                             code=vendor_status or None, details=details)
    exc = from_upstream_status(status, message, code=vendor_status or None, details=details)
    if isinstance(exc, RateLimited):
        for detail in details_list:
            match = _RETRY_DELAY.match(str(detail.get("retryDelay", ""))) if isinstance(detail, dict) else None
            if match:
                exc.retry_after = float(match.group(1))
    return exc
