"""The spend headers middleware on its own: the admitted call's x-ratelimit-* and cost headers go
into the answer, and a header the view set itself is kept."""

from __future__ import annotations

from django.http import HttpResponse
from django.test import RequestFactory

from api.spend_headers import COST_HEADER, SpendHeadersMiddleware
from studio.core.principal import Principal
from studio.gateway import admission, limits
from studio.gateway.cost import Usage

RULES = [limits.Rule("requests", 5, ""), limits.Rule("tokens", 900, "")]
NOW = 1_000_000 * 60 + 15.0


def _admitted(view_headers: dict[str, str]):
    async def view(request):
        ticket = admission.Ticket(Principal(user_id=1, key_id=2), "m", (), NOW)
        ticket.headers = limits.admitted_headers(limits.header_kinds(RULES), (1, 40), (0, 0), NOW)
        ticket.charge(Usage(), None)
        holder = admission.current.get()
        assert holder is not None
        holder.ticket = ticket
        response = HttpResponse(b"{}", content_type="application/json")
        for name, value in view_headers.items():
            response[name] = value
        return response

    return SpendHeadersMiddleware(view)


async def test_an_admitted_calls_headers_reach_the_answer():
    response = await _admitted({})(RequestFactory().post("/v1/chat/completions"))
    assert response["x-ratelimit-limit-requests"] == "5"
    assert response["x-ratelimit-remaining-requests"] == "4"
    assert response["x-ratelimit-reset-requests"] == "45s"  # one call: out of the count once the minute turns
    assert response["x-ratelimit-remaining-tokens"] == "860"
    assert response[COST_HEADER] == "0"


async def test_a_header_the_view_set_itself_is_kept_and_the_others_are_added():
    middleware = _admitted({"X-RateLimit-Remaining-Requests": "0"})
    response = await middleware(RequestFactory().post("/v1/chat/completions"))
    assert response["x-ratelimit-remaining-requests"] == "0"
    assert response.headers._store["x-ratelimit-remaining-requests"][0] == "X-RateLimit-Remaining-Requests"
    assert response["x-ratelimit-limit-requests"] == "5"
    assert response["x-ratelimit-remaining-tokens"] == "860"
