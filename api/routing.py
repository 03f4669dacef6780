"""Routers that declare their family: the error spelling and the OpenAPI security of their routes.

Each operation's URL name is ``<family>.<operation>``, so an exception handler knows the family
from the matched route (``api.errors.family_for``), and a request with a method the path does
not take gets the family's JSON 405 instead of an empty text page.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Router
from ninja.operation import PathView

from api.errors import Family
from studio.core.errors import GatewayError


class MethodNotAllowed(GatewayError):
    status = 405
    kind = "method_not_allowed"


class FamilyPathView(PathView):
    """One path's operations; a method none of them takes answers in the family's error body."""

    def __init__(self, family: Family) -> None:
        super().__init__()
        self.family = family

    def clone(self) -> FamilyPathView:
        cloned = FamilyPathView(self.family)
        cloned.is_async = self.is_async
        cloned.url_name = self.url_name
        cloned.operations = [op.clone() for op in self.operations]
        return cloned

    def _allowed(self) -> list[str]:
        return sorted({method for op in self.operations for method in op.methods})

    def _method_not_allowed(self, request: HttpRequest) -> HttpResponse:
        allowed = self._allowed()
        exc = MethodNotAllowed(f"{request.method} is not allowed on {request.path}; use {', '.join(allowed)}")
        return self.family.response(exc, headers={"Allow": ", ".join(allowed)})

    def _sync_view(self, request: HttpRequest, *a: Any, **kw: Any) -> HttpResponse:
        if self._find_operation(request) is None:
            return self._method_not_allowed(request)
        return super()._sync_view(request, *a, **kw)

    async def _async_view(self, request: HttpRequest, *a: Any, **kw: Any) -> HttpResponse:
        if self._find_operation(request) is None:
            return self._method_not_allowed(request)
        return await super()._async_view(request, *a, **kw)


class FamilyRouter(Router):
    """A ninja ``Router`` whose operations belong to one family.

    ``security`` is the OpenAPI security requirement of every operation (names of the schemes in
    ``api.openapi.SECURITY_SCHEMES``, any one of which is enough). The key itself is read inside
    the handlers (``api.auth``), so each family keeps its own header rules and error body.
    """

    def __init__(self, family: Family, *, security: list[str], tags: list[str]) -> None:
        super().__init__(tags=tags)
        self.family = family
        self.security = [{name: []} for name in security]

    def add_api_operation(self, path: str, methods: list[str], view_func: Any, *,
                          url_name: str | None = None, openapi_extra: dict[str, Any] | None = None,
                          include_in_schema: bool = True, **kwargs: Any) -> None:
        if path not in self.path_operations:
            self.path_operations[path] = FamilyPathView(self.family)
        extra = dict(openapi_extra or {})
        if include_in_schema and self.security:
            extra.setdefault("security", self.security)
        super().add_api_operation(path, methods, view_func,
                                  url_name=f"{self.family.name}.{url_name or view_func.__name__}",
                                  openapi_extra=extra, include_in_schema=include_in_schema, **kwargs)
