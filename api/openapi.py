"""The OpenAPI document: request bodies from each family's Schemas, and the key schemes.

Handlers read the raw body and hand it to the engine, which forwards it byte for byte when the
upstream speaks the same format (unknown fields, key order and number spellings survive, and a
multi-megabyte image body is never parsed into models and serialized again). So the Schemas are
not used to parse requests: ``body_doc`` puts their JSON schema into the operation's
``requestBody`` through ``openapi_extra``, and ``Api`` adds them to ``components.schemas``.
"""

from __future__ import annotations

from typing import Any

from ninja import NinjaAPI, Schema

SECURITY_SCHEMES: dict[str, dict[str, Any]] = {
    "bearer": {"type": "http", "scheme": "bearer", "description": "Authorization: Bearer <platform key>"},
    "x-api-key": {"type": "apiKey", "in": "header", "name": "x-api-key",
                  "description": "The platform key (messages; Bearer is accepted too)"},
    "x-delta-api-key": {"type": "apiKey", "in": "header", "name": "x-delta-api-key",
                        "description": "The platform key (native routes)"},
    "x-goog-api-key": {"type": "apiKey", "in": "header", "name": "x-goog-api-key",
                       "description": "Alias of x-delta-api-key, as the official SDK sends it"},
    "key": {"type": "apiKey", "in": "query", "name": "key", "description": "The platform key as ?key= (native)"},
}
BEARER = ["bearer"]
MESSAGES_KEYS = ["x-api-key", "bearer"]
NATIVE_KEYS = ["x-delta-api-key", "x-goog-api-key", "key", "bearer"]

REF = "#/components/schemas/{model}"
_documented: dict[str, type[Schema]] = {}


def schema_ref(schema: type[Schema]) -> dict[str, str]:
    known = _documented.setdefault(schema.__name__, schema)
    if known is not schema:
        raise ValueError(f"two request Schemas are named {schema.__name__}: the document would show one for both")
    return {"$ref": REF.format(model=schema.__name__)}


def body_doc(**content: type[Schema]) -> dict[str, Any]:
    """``openapi_extra`` declaring a required body, one Schema per media type.

    ``body_doc(json=ChatRequest)`` or ``body_doc(json=EditRequest, multipart=EditForm)``.
    """
    media = {"json": "application/json", "multipart": "multipart/form-data"}
    return {"requestBody": {"required": True, "content": {
        media[kind]: {"schema": schema_ref(schema)} for kind, schema in content.items()
    }}}


def component_schemas() -> dict[str, Any]:
    """Every documented Schema and the models nested in it, as ``components.schemas``."""
    components: dict[str, Any] = {}
    for name, schema in _documented.items():
        document = schema.model_json_schema(ref_template=REF)
        components.update(document.pop("$defs", {}))
        components[name] = document
    return components


class Api(NinjaAPI):
    """A ``NinjaAPI`` whose document also carries the body Schemas and the key schemes."""

    def get_openapi_schema(self, *args: Any, **kwargs: Any) -> Any:
        document = super().get_openapi_schema(*args, **kwargs)
        components = document.setdefault("components", {})
        components.setdefault("schemas", {}).update(component_schemas())
        components.setdefault("securitySchemes", {}).update(SECURITY_SCHEMES)
        return document
