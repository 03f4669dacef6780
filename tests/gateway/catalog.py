"""Catalog entries and upstream entries for engine tests that need no database."""

from __future__ import annotations

from studio.catalog_data import DEMO_MODELS
from studio.core.entries import ModelEntry, UpstreamEntry

_BY_ID = {m["model_id"]: m for m in DEMO_MODELS}


def model_entry(model_id: str, **capabilities) -> ModelEntry:
    """The demo catalog's entry for ``model_id`` as the snapshot holds it (capabilities overridable)."""
    row = _BY_ID[model_id]
    return ModelEntry(model_id=model_id, kind=row["kind"], routes=frozenset(row["routes"]),
                      capabilities={**row["capabilities"], **capabilities},
                      default_protocol=row["default_protocol"], owned_by=row["owned_by"], created=0)


def upstream_entry(id: int, *, priority: int = 0, weight: int = 1, name: str = "", protocol: str = "openai",
                   model_map: dict[str, str] | None = None) -> UpstreamEntry:
    return UpstreamEntry(id=id, name=name or f"up{id}", protocol=protocol, base_url=f"http://up{id}.test",
                         credential="secret", priority=priority, weight=weight, timeout=None,
                         model_map=model_map or {})
