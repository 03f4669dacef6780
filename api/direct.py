"""The hottest /v1 routes, answered without Django's URL resolver or ninja's operation wrapper.

Chat completions, messages, responses, image generations and the native ``generateContent`` /
``streamGenerateContent`` (under ``/v1`` and ``/v1beta``) are found here by their exact path and
method; the request gets the same ``resolver_match`` (family, URL name, path arguments) the
resolver would have given it, and the handler's exceptions become the same answers as ninja's
exception handlers give (``api.failures``). Anything else (another method, another path) goes
through the resolver as before. The routes are still declared on the ninja routers, so they are
in ``/v1/openapi.json`` and ``/v1/docs`` as they were.

Neither the resolver's walk over every /v1 pattern nor ninja's per-call work is paid on these
routes, and a process serving only them never imports ninja, pydantic or the Schemas.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from django.http import HttpRequest, HttpResponseBase
from django.urls import ResolverMatch

from api import failures
from api.errors import MESSAGES, NATIVE, OPENAI, Family
from api.images import routes as images
from api.native import routes as native
from api.text import chat, messages, responses

View = Callable[..., Awaitable[HttpResponseBase]]


def _match(view: View, family: Family, namespace: str, route: str, **kwargs: str) -> ResolverMatch:
    """What ``django.urls.resolve`` gives for the ninja route of ``view``."""
    return ResolverMatch(view, (), kwargs, url_name=f"{family.name}.{view.__name__}", app_names=["ninja"],
                         namespaces=[namespace], route=route)


EXACT: dict[str, tuple[View, ResolverMatch]] = {
    f"/{route}": (view, _match(view, family, "v1", route))
    for route, view, family in (
        ("v1/chat/completions", chat.chat_completions, OPENAI),
        ("v1/messages", messages.messages, MESSAGES),
        ("v1/responses", responses.responses, OPENAI),
        ("v1/images/generations", images.generations, OPENAI),
    )
}
NATIVE_ACTIONS: dict[str, View] = {
    ":generateContent": native.generate_content,
    ":streamGenerateContent": native.stream_generate_content,
}
NATIVE_PREFIXES = {"/v1/models/": "v1", "/v1beta/models/": "v1beta"}


def find(method: str | None, path: str) -> tuple[View, ResolverMatch] | None:
    """The handler and match of a direct route, or ``None`` for the resolver to decide."""
    if method != "POST":
        return None
    found = EXACT.get(path)
    if found is not None:
        return found
    for prefix, namespace in NATIVE_PREFIXES.items():
        if path.startswith(prefix):
            model, colon, action = path[len(prefix):].rpartition(":")
            view = NATIVE_ACTIONS.get(colon + action)
            if view is None or not model or "/" in model:  # the route's ``{model}`` is one path segment
                return None
            return view, _match(view, NATIVE, namespace, f"{namespace}/models/<model>{colon}{action}", model=model)
    return None


async def respond(request: HttpRequest, view: View, match: ResolverMatch) -> HttpResponseBase:
    request.resolver_match = match
    kwargs: dict[str, Any] = match.kwargs
    try:
        return await view(request, **kwargs)
    except Exception as exc:  # as ninja's exception handlers answer it
        return failures.answer(request, exc)
