"""Who is calling: an API key (owned by a user, optionally a team) or a signed-in studio user."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Principal:
    user_id: int
    key_id: int | None = None
    team_id: int | None = None
    allowed_models: frozenset[str] | None = None
    key_prefix: str = ""

    def may_use(self, model_id: str) -> bool:
        return self.allowed_models is None or model_id in self.allowed_models
