"""The snapshot's plain entries: what providers and the engine read instead of model rows."""

from __future__ import annotations

import dataclasses

import pytest

from studio.core.entries import KeyEntry, Snapshot, UpstreamEntry


def upstream(model_map: dict[str, str]) -> UpstreamEntry:
    return UpstreamEntry(id=1, name="vendor", protocol="openai", base_url="https://vendor.test/v1",
                         credential="sk", priority=0, weight=1, timeout=None, model_map=model_map)


def test_upstream_model_follows_the_map_and_falls_back_to_the_platform_name():
    up = upstream({"omicron-4-mini": "gpt-vendor"})
    assert up.upstream_model("omicron-4-mini") == "gpt-vendor"
    assert up.upstream_model("epsilon-4.5") == "epsilon-4.5"


def test_an_empty_mapping_falls_back_too():
    assert upstream({"omicron-4-mini": ""}).upstream_model("omicron-4-mini") == "omicron-4-mini"


def test_entries_are_immutable():
    key = KeyEntry(id=1, user_id=1, team_id=None, prefix="sk-ab", allowed_models=None, expires_at=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        key.user_id = 2  # type: ignore[misc]


def test_snapshots_do_not_share_their_tables():
    a, b = Snapshot(), Snapshot()
    a.models["m"] = None  # type: ignore[assignment]
    assert b.models == {}
