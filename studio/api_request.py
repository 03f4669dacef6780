"""The request object of a /v1 call: Django's ``ASGIRequest``, made with less work.

Django builds ``META`` by decoding, upper-casing and rewriting every header name of every
request, gathering the values in lists to join them, and parses the content type with its
general header parser. A /v1 client sends the same few header names on every call, nearly
always with ``Content-Type: application/json``: here each name's ``META`` key is worked out once
(up to ``NAMES_KEPT`` names), and that content type needs no parsing. The object that results is
the one Django makes (``tests/test_api_request.py`` compares them attribute by attribute).
"""

from __future__ import annotations

from typing import Any

from django.core.handlers.asgi import ASGIRequest

from studio.core.hot_settings import script_prefix
from studio.core.memo import Memo

NAMES_KEPT = 512
JSON = "application/json"


def _meta_key(raw: bytes) -> str | None:
    name = raw.decode("latin1")
    if "_" in name:
        key = None
    elif name == "content-length":
        key = "CONTENT_LENGTH"
    elif name == "content-type":
        key = "CONTENT_TYPE"
    else:
        key = "HTTP_" + name.upper().replace("-", "_")
    return key


_meta_names: Memo[bytes, str | None] = Memo(_meta_key, NAMES_KEPT)  # a header's name → its META key


def meta_name(raw: bytes) -> str | None:
    """The ``META`` key of the header named ``raw``, as Django's ``ASGIRequest`` spells it; None
    for a name with an underscore, which Django drops (it would be ambiguous with a hyphen)."""
    return _meta_names[raw]


class ApiRequest(ASGIRequest):
    def __init__(self, scope: dict[str, Any], body_file: Any) -> None:  # noqa: PLR0912 - Django's steps, in order
        self.scope = scope
        self._post_parse_error = False
        self._read_started = False
        self.resolver_match = None
        path = self.path = scope["path"]
        script_name = self.script_name = script_prefix(scope)
        path_info = self.path_info = path.removeprefix(script_name) if script_name else path
        method = self.method = scope["method"].upper()
        query_string = scope.get("query_string", "")
        if isinstance(query_string, bytes):
            query_string = query_string.decode()
        meta: dict[str, Any] = {
            "REQUEST_METHOD": method, "QUERY_STRING": query_string, "SCRIPT_NAME": script_name,
            "PATH_INFO": path_info, "wsgi.multithread": True, "wsgi.multiprocess": True,
        }
        client = scope.get("client")
        if client:
            meta["REMOTE_ADDR"] = meta["REMOTE_HOST"] = client[0]
            meta["REMOTE_PORT"] = client[1]
        server = scope.get("server")
        if server:
            meta["SERVER_NAME"] = server[0]
            meta["SERVER_PORT"] = str(server[1])
        else:
            meta["SERVER_NAME"] = "unknown"
            meta["SERVER_PORT"] = "0"
        headers: dict[str, str] = {}
        for raw, value in scope.get("headers", []):
            key = _meta_names[raw]
            if key is None:
                continue
            text = value.decode("latin1")
            headers[key] = headers[key] + "," + text if key in headers else text  # a repeated header: joined
        meta.update(headers)
        self.META = meta
        if headers.get("CONTENT_TYPE") == JSON:
            self.content_type, self.content_params = JSON, {}
        else:
            self._set_content_type_params(meta)
        self._stream = body_file
