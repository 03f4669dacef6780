"""Who is calling: an API key (owned by a user, optionally a team) or a signed-in studio user."""

from __future__ import annotations

import time

from studio.core.entries import ModelEntry, Snapshot
from studio.core.errors import AuthenticationFailed, CapabilityMissing, NotFound, PermissionDenied
from studio.core.principal import Principal
from studio.models.accounts import KEY_PREFIX, hash_secret


def authenticate(snapshot: Snapshot, secret: str) -> Principal:
    """Resolve a platform key from the snapshot (no database). Vendor keys are simply unknown."""
    if not secret:
        raise AuthenticationFailed("missing API key")
    entry = snapshot.keys.get(hash_secret(secret)) if secret.startswith(KEY_PREFIX) else None
    if entry is None:
        raise AuthenticationFailed("invalid API key")
    if entry.expires_at is not None and entry.expires_at <= time.time():
        raise AuthenticationFailed("API key has expired")
    return entry.principal


def resolve_model(snapshot: Snapshot, principal: Principal, model_id: str, route: str, *,
                  use: str = "this route") -> ModelEntry:
    """The catalog entry for ``model_id`` on ``route``, checked against the key's allowance.

    The same three errors on every route: an unknown model is ``NotFound`` (``model_not_found``),
    one the key may not use ``PermissionDenied`` (``model_not_allowed``), one that cannot serve
    this route ``CapabilityMissing`` (``model_not_supported``); ``use`` names the route in its message.
    """
    model = snapshot.models.get(model_id)
    if model is None:
        raise NotFound(f"the model '{model_id}' does not exist", param="model", code="model_not_found")
    if not principal.may_use(model_id):
        raise PermissionDenied(
            f"this API key is not allowed to use model '{model_id}'", param="model", code="model_not_allowed"
        )
    if route not in model.routes:
        raise CapabilityMissing(f"the model '{model_id}' is a {model.kind} model; it cannot be used for {use}")
    return model
