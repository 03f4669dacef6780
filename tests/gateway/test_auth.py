"""Resolving keys and models from the snapshot alone: no database on the hot path."""

from __future__ import annotations

import time

import pytest

from studio.core.entries import KeyEntry, Snapshot
from studio.core.errors import AuthenticationFailed, CapabilityMissing, NotFound, PermissionDenied
from studio.core.principal import Principal
from studio.gateway.auth import authenticate, resolve_model
from studio.models.accounts import KEY_PREFIX, hash_secret
from tests.gateway.catalog import model_entry

SECRET = KEY_PREFIX + "unit-secret-value"


def snapshot(**key) -> Snapshot:
    entry = KeyEntry(id=4, user_id=9, team_id=key.pop("team_id", None), prefix=SECRET[:12],
                     allowed_models=key.pop("allowed_models", None), expires_at=key.pop("expires_at", None))
    snap = Snapshot(keys={hash_secret(SECRET): entry})
    snap.models = {m: model_entry(m) for m in ("omicron-4-mini", "kappa-image-1")}
    return snap


def test_a_known_key_becomes_its_principal(count_queries):
    count_queries["n"] = 0
    snap = snapshot(team_id=3, allowed_models=frozenset({"omicron-4-mini"}))
    principal = authenticate(snap, SECRET)
    assert principal == Principal(user_id=9, key_id=4, team_id=3, allowed_models=frozenset({"omicron-4-mini"}),
                                  key_prefix=SECRET[:12])
    assert authenticate(snap, SECRET) is principal  # made with the key's entry, not per call
    assert count_queries["n"] == 0


@pytest.mark.parametrize(("secret", "words"), [("", "missing"), ("sk-vendor-key", "invalid"),
                                               (KEY_PREFIX + "unknown", "invalid")])
def test_missing_and_unknown_keys(secret: str, words: str):
    with pytest.raises(AuthenticationFailed) as exc:
        authenticate(snapshot(), secret)
    assert words in exc.value.message and exc.value.status == 401


def test_expired_keys():
    with pytest.raises(AuthenticationFailed, match="expired"):
        authenticate(snapshot(expires_at=time.time() - 1), SECRET)
    assert authenticate(snapshot(expires_at=time.time() + 60), SECRET).key_id == 4


def test_resolve_model_checks_route_and_allowance():
    snap = snapshot()
    anyone = Principal(user_id=1)
    assert resolve_model(snap, anyone, "omicron-4-mini", "chat").model_id == "omicron-4-mini"
    with pytest.raises(CapabilityMissing) as exc:  # it exists, but not on this route
        resolve_model(snap, anyone, "kappa-image-1", "chat")
    assert (exc.value.param, exc.value.code) == ("model", "model_not_supported")
    with pytest.raises(NotFound):
        resolve_model(snap, anyone, "nope", "chat")
    limited = Principal(user_id=1, allowed_models=frozenset({"kappa-image-1"}))
    with pytest.raises(PermissionDenied) as exc:
        resolve_model(snap, limited, "omicron-4-mini", "chat")
    assert (exc.value.param, exc.value.code, exc.value.status) == ("model", "model_not_allowed", 403)
