"""Captured vendor bodies (``<vendor>/fixtures/*.json``), copied from the vendors' public docs and
SDK examples, for the contract tests that replay them through each adapter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from studio.core.entries import ModelEntry

HERE = Path(__file__).parent


def captured(vendor: str, name: str) -> Any:
    return orjson.loads((HERE / vendor / "fixtures" / f"{name}.json").read_bytes())


def model(model_id: str = "m-1", protocol: str = "openai") -> ModelEntry:
    return ModelEntry(model_id=model_id, kind="image", routes=frozenset(), capabilities={},
                      default_protocol=protocol, owned_by="x", created=0)
