"""Spend headers on every /v1 answer: ``x-studio-cost-usd`` and OpenAI's ``x-ratelimit-*``.

The engine's admission point leaves the request's ticket in a context variable; this
middleware reads it once the view has answered. A buffered answer carries its cost (``0`` for
an error: a failed call costs nothing); a stream carries its rate-limit headers, and its cost
arrives in the format's final usage event. Views that know the cost themselves (a video task's
query) set the header and it is kept.

The headers go straight into the response's header store (Django's ``ResponseHeaders``: lower-
cased name → ``(name, value)``). Through its mapping interface each one cost a ``KeyError``
raised and caught for the "already set?" test and two charset checks: about 13,000 instructions
a header, a fifth of what limits add to a call. Their names are lower-case ASCII constants and
their values numbers and durations made here, which those checks would pass unchanged.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from api.middleware import AsyncMiddleware
from studio.gateway import admission

COST_HEADER = "x-studio-cost-usd"


class SpendHeadersMiddleware(AsyncMiddleware):
    async def __call__(self, request: HttpRequest) -> HttpResponse:
        holder = admission.Collect()
        token = admission.current.set(holder)
        try:
            response = await self.get_response(request)
        finally:
            admission.current.reset(token)
        ticket = holder.ticket
        store = response.headers._store
        if ticket is not None and ticket.headers:
            held = ticket.headers
            if store.keys().isdisjoint(held):
                store.update(held)
            else:  # a header the view set itself is kept
                for name, pair in held.items():
                    store.setdefault(name, pair)
        if not response.streaming and COST_HEADER not in store:
            store[COST_HEADER] = (COST_HEADER, ticket.cost_display() if ticket is not None else "0")
        return response
