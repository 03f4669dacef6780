"""Who is calling: an API key (owned by a user, optionally a team) or a signed-in studio user."""

from __future__ import annotations

import time
from dataclasses import dataclass

from studio.models.accounts import KEY_PREFIX, hash_secret

from .errors import AuthenticationFailed, NotFound, PermissionDenied
from .snapshot import ModelEntry, Snapshot


@dataclass(frozen=True, slots=True)
class Principal:
    user_id: int
    key_id: int | None = None
    team_id: int | None = None
    allowed_models: frozenset[str] | None = None
    key_prefix: str = ""

    def may_use(self, model_id: str) -> bool:
        return self.allowed_models is None or model_id in self.allowed_models


def authenticate(snapshot: Snapshot, secret: str) -> Principal:
    """Resolve a platform key from the snapshot (no database). Vendor keys are simply unknown."""
    if not secret:
        raise AuthenticationFailed("missing API key")
    entry = snapshot.keys.get(hash_secret(secret)) if secret.startswith(KEY_PREFIX) else None
    if entry is None:
        raise AuthenticationFailed("invalid API key")
    if entry.expires_at is not None and entry.expires_at <= time.time():
        raise AuthenticationFailed("API key has expired")
    return Principal(
        user_id=entry.user_id,
        key_id=entry.id,
        team_id=entry.team_id,
        allowed_models=entry.allowed_models,
        key_prefix=entry.prefix,
    )


def resolve_model(snapshot: Snapshot, principal: Principal, model_id: str, route: str) -> ModelEntry:
    """The catalog entry for ``model_id`` on ``route``, checked against the key's allowance."""
    model = snapshot.models.get(model_id)
    if model is None or route not in model.routes:
        raise NotFound(f"model '{model_id}' is not available on this route", param="model", code="model_not_found")
    if not principal.may_use(model_id):
        raise PermissionDenied(
            f"this API key is not allowed to use model '{model_id}'", param="model", code="model_not_allowed"
        )
    return model
