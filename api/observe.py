"""Request id, metrics and the request log line of every /v1 answer.

Runs inside ``SpendHeadersMiddleware``, so the request's admission ticket (model, upstream,
usage and cost, once the engine has charged it) is at hand. An incoming ``X-Request-Id`` is
kept when sane, else one is made; it is answered as ``x-request-id`` and, through a context
variable the providers read, sent to the upstream. A buffered answer is counted when the view
returns; a stream when the server has sent its last part (time to first byte: its first part),
as 499 when the client left before the end (``studio.core.streams.delivered``).
"""

from __future__ import annotations

import time

from django.http import HttpRequest, HttpResponse

from api.middleware import AsyncMiddleware
from studio.core import request_id, streams
from studio.core.hot_settings import hot
from studio.gateway import admission, metrics, request_log


class ObserveMiddleware(AsyncMiddleware):
    async def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        rid = request_id.accept(request.META.get("HTTP_X_REQUEST_ID"))
        # Not reset on the way out: a stream calls its upstream after this returns, and each
        # request runs in a task (and context) of its own.
        request_id.current.set(rid)
        response = await self.get_response(request)
        # Straight into the header store (as ``api.spend_headers`` does): the name is a lower-case
        # constant and the id plain ASCII (``request_id.accept``), which Django's checks pass unchanged.
        response.headers._store[request_id.HEADER] = (request_id.HEADER, rid)
        counted, logged = hot.STUDIO_METRICS, hot.STUDIO_REQUEST_LOG
        if not (counted or logged):
            return response
        done = _Done(request, rid, started, admission.current.get(), counted, logged)
        if response.streaming and response.is_async:
            # Reported by the server once the stream has ended (``studio.serving.send_parts``).
            streams.delivered.set(done)
        else:
            done(response.status_code, None)
        return response


class _Done:
    """What to report once the answer has been sent."""

    __slots__ = ("counted", "holder", "logged", "request", "rid", "started")

    def __init__(self, request: HttpRequest, rid: str, started: float, holder: admission.Collect | None,
                 counted: bool, logged: bool) -> None:
        self.request, self.rid, self.started, self.holder = request, rid, started, holder
        self.counted, self.logged = counted, logged  # metrics and the request log, as set when it began

    def __call__(self, status: int, first_part: float | None) -> None:
        now = time.perf_counter()
        seconds = now - self.started
        first = (first_part if first_part is not None else now) - self.started
        ticket = self.holder.ticket if self.holder is not None else None
        match = self.request.resolver_match
        family = (match.url_name or "").partition(".")[0] if match is not None else ""
        model = ticket.model_id if ticket is not None else ""
        upstream = metrics.upstream_name(ticket.upstream_id) if ticket is not None else ""
        usage = ticket.usage if ticket is not None else None
        if self.counted:
            metrics.request_done(family, model, upstream, status, seconds, first, usage)
        if self.logged:
            request = self.request
            request_log.emit(request_log.entry(
                request_id=self.rid, method=request.method or "", path=request.path, family=family, status=status,
                latency_ms=seconds * 1000, first_byte_ms=first * 1000,
                principal=ticket.principal if ticket is not None else None, model=model, upstream=upstream,
                usage=usage, cost=ticket.cost_display() if ticket is not None and ticket.cost is not None else None,
                prompt=_prompt(request) if hot.STUDIO_LOG_PROMPTS else None,
            ))


def _prompt(request: HttpRequest) -> str | None:
    if request.content_type == "multipart/form-data":  # image edits: the prompt is a form field
        value = request.POST.get("prompt")
        return value[: request_log.PROMPT_LIMIT] if value else None
    return request_log.prompt_of(request.body)
