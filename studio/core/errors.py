"""The engine's one error vocabulary.

Every layer below the inbound API raises these; each inbound family (native, OpenAI-style,
messages, protocol A (ark), protocol B (dashscope)) renders them in its own body (see ``api/errors.py``).
``retryable`` tells the router whether another upstream may be tried, provided nothing has
been sent to the client yet.
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)


class GatewayError(Exception):
    """Base of every typed error. ``status`` is the HTTP status the client receives."""

    status: int = 500
    kind: str = "internal"
    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        status: int | None = None,
        retry_after: float | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code
        if status is not None:
            self.status = status
        self.retry_after = retry_after
        self.details = details or {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.status}, {self.message!r}, param={self.param!r})"


class BadRequest(GatewayError):
    """The client's request is invalid; the message names the field (``param``)."""

    status = 400
    kind = "invalid_request"


class CapabilityMissing(BadRequest):
    """The model exists and the key may use it, but it cannot do what this route asks (its kind, or
    its upstreams' protocols lack the capability: refused before any upstream call)."""

    kind = "capability_missing"

    def __init__(self, message: str, *, param: str | None = "model", code: str | None = "model_not_supported",
                 **kw: Any) -> None:
        super().__init__(message, param=param, code=code, **kw)


class AuthenticationFailed(GatewayError):
    status = 401
    kind = "authentication"


class PermissionDenied(GatewayError):
    status = 403
    kind = "permission"


class NotFound(GatewayError):
    status = 404
    kind = "not_found"


class TaskNotCancellable(BadRequest):
    """The task has finished (or is past the point where its vendor lets it be cancelled)."""

    kind = "task_not_cancellable"

    def __init__(self, message: str, *, param: str | None = "taskId", code: str | None = "task_not_cancellable",
                 **kw: Any) -> None:
        super().__init__(message, param=param, code=code, **kw)


class PayloadTooLarge(GatewayError):
    status = 413
    kind = "too_large"


class RateLimited(GatewayError):
    status = 429
    kind = "rate_limited"
    retryable = True


class QuotaExceeded(RateLimited):
    """A budget's hard stop: the key, user or team has spent its limit for the period.

    ``details``: ``budget`` (what it limits), ``resets_at`` (ISO time, or None for a total budget).
    """

    kind = "quota_exceeded"
    retryable = False


class LimitExceeded(RateLimited):
    """A rate limit of the gateway's own (requests, tokens or images per minute, video tasks at once).

    ``details``: ``limit`` (``requests``, ``tokens``, ``images`` or ``videos``) and ``headers``.
    """

    kind = "rate_limit_exceeded"
    retryable = False


class UpstreamError(GatewayError):
    """The upstream answered with an error that is not the client's fault (5xx and the like)."""

    status = 502
    kind = "upstream"
    retryable = True


# What reading a vendor's answer raises when it is not of its protocol's shape (a field of another
# JSON type than the protocol gives it, or a required one left out): see ``unreadable``.
SHAPE_ERRORS = (TypeError, ValueError, KeyError, IndexError, AttributeError)


class UnreadableAnswer(UpstreamError):
    """The upstream answered 2xx with a body that is not of its protocol's shape: the upstream's
    fault, told to the client as a 502 rather than passed on or taken for a gateway error."""

    retryable = False


# The places an unreadable answer was met (what was read, the error's type, the line that raised
# it) whose traceback this process has logged: each is logged with it once, then in one line.
_traced: set[tuple[str, type, str, int]] = set()
_TRACED_MAX = 1024


def _raised_at(exc: BaseException) -> tuple[str, int]:
    tb = exc.__traceback__
    if tb is None:
        return "", 0
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename, tb.tb_lineno


def unreadable(exc: BaseException, what: str = "answer") -> UnreadableAnswer:
    """The typed error for ``exc`` (one of ``SHAPE_ERRORS``) raised while reading the upstream's
    ``what``. The cause is logged with its traceback the first time a place meets it, so a fault of
    the gateway's own reading would show there; after that in one line, so an upstream answering
    thousands of such bodies does not flood the log."""
    place = (what, type(exc), *_raised_at(exc))
    if place in _traced:
        logger.warning("the upstream's %s could not be read: %s: %s", what, type(exc).__name__, exc)
    else:
        if len(_traced) >= _TRACED_MAX:
            _traced.clear()
        _traced.add(place)
        logger.warning("the upstream's %s could not be read", what, exc_info=exc)
    return UnreadableAnswer(f"the upstream's {what} does not have the shape its protocol gives it "
                            "(a field of another type, or one left out)")


class UpstreamRejected(GatewayError):
    """The upstream refused the request as invalid (its 4xx); retrying elsewhere will not help."""

    status = 400
    kind = "invalid_request"


class UpstreamUnavailable(GatewayError):
    """Could not connect to the upstream, or it said it is overloaded."""

    status = 503
    kind = "unavailable"
    retryable = True


class UpstreamTimeout(GatewayError):
    status = 504
    kind = "timeout"
    retryable = True


class ClientClosedRequest(GatewayError):
    """The client went away before the answer ended (status 499, as proxies log it). Not an
    error the client sees; what its stream had been sent by then is still charged."""

    status = 499
    kind = "client_closed"


class NoUpstream(GatewayError):
    """The model exists but no enabled upstream serves it."""

    status = 503
    kind = "unavailable"


def from_upstream_status(status: int, message: str, **kw: Any) -> GatewayError:
    """Map an upstream HTTP status to the typed error the router and renderers understand."""
    if status == 429:
        return RateLimited(message, **kw)
    if status in (401, 403):
        # The upstream rejected *our* credential: an operator problem, not the client's.
        return UpstreamError(f"upstream refused the gateway's credential: {message}", **kw)
    if status == 404:
        # A model or a task the upstream does not know: the message says which.
        return UpstreamError(f"upstream answered not found: {message}", **kw)
    if status == 408 or status == 504:
        return UpstreamTimeout(message, **kw)
    if status in (502, 503, 529):
        return UpstreamUnavailable(message, **kw)
    if 400 <= status < 500:
        return UpstreamRejected(message, status=400 if status in (400, 422) else status, **kw)
    return UpstreamError(message, **kw)
