"""The id of the /v1 request being served: kept from the client's ``X-Request-Id`` when it is
sane, else made here; answered to the client and sent on to the upstream."""

from __future__ import annotations

import contextvars
import random
import re

HEADER = "x-request-id"
# Letters, digits and a few separators, up to 128 characters: what tracing systems send, and
# nothing that could forge a log line or a header.
_SANE = re.compile(r"[A-Za-z0-9._:\-]{1,128}")

current: contextvars.ContextVar[str | None] = contextvars.ContextVar("studio_request_id", default=None)


def accept(incoming: str | None) -> str:
    """The client's id when it is sane, else a new one."""
    if incoming and _SANE.fullmatch(incoming):
        return incoming
    return new()


def new() -> str:
    """32 hex digits: 128 bits from the process's own generator (seeded from the system's
    randomness, and again in a forked child). An id needs to be unique, not secret: ``os.urandom``
    is a system call per request, and ``uuid.uuid4()`` builds and formats a ``UUID`` besides."""
    return f"{random.getrandbits(128):032x}"
