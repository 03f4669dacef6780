"""What the /v1 hot path reads: immutable entries for keys, catalog models and upstreams.

The engine's snapshot (``studio.gateway.snapshot``) loads them from the database; everything
below the engine (providers) sees only these plain values, never a model row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from studio.core.principal import Principal


@dataclass(frozen=True, slots=True)
class KeyEntry:
    id: int
    user_id: int
    team_id: int | None
    prefix: str
    allowed_models: frozenset[str] | None  # None: every model
    expires_at: float | None  # epoch seconds
    # Who calls with this key, made once with the entry: every call of the key is this caller (a
    # frozen dataclass sets each field through ``object.__setattr__``, about 1 µs a call made anew).
    principal: Principal = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "principal", Principal(user_id=self.user_id, key_id=self.id, team_id=self.team_id,
                                                        allowed_models=self.allowed_models, key_prefix=self.prefix))


@dataclass(frozen=True, slots=True)
class ModelEntry:
    model_id: str
    kind: str
    routes: frozenset[str]
    capabilities: dict[str, Any]
    default_protocol: str
    owned_by: str
    created: int
    display_name: str = ""
    description: str = ""


@dataclass(frozen=True, slots=True)
class UpstreamEntry:
    id: int
    name: str
    protocol: str
    base_url: str
    credential: str
    priority: int
    weight: int
    timeout: float | None
    model_map: dict[str, str]

    def upstream_model(self, model_id: str) -> str:
        return self.model_map.get(model_id) or model_id


@dataclass(frozen=True, slots=True)
class PriceEntry:
    """One price row: USD per million tokens, per image (by size[/quality]), per video second
    (by resolution[+audio]) and per request, from ``effective_from`` (epoch seconds) on."""

    model_id: str
    upstream_id: int | None
    effective_from: float
    input_per_million: Decimal = Decimal(0)
    output_per_million: Decimal = Decimal(0)
    cached_per_million: Decimal | None = None
    per_request: Decimal = Decimal(0)
    per_image: dict[str, Decimal] = field(default_factory=dict)
    per_video_second: dict[str, Decimal] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BudgetEntry:
    """A spending limit (nano-dollars) of one key, user or team. ``base`` is what the database
    held for the period starting at ``base_window`` when the snapshot was read: the starting
    value of a counter that Redis (or this process) does not have yet."""

    id: int
    scope: str  # "key", "user" or "team"
    target_id: int
    limit_nano: int
    period: str
    soft_percent: int
    base_nano: int = 0
    base_window: float = 0.0
    label: str = ""


@dataclass(frozen=True, slots=True)
class LimitEntry:
    """Per-minute limits of one key (for all models or one); None: no limit."""

    rpm: int | None = None
    tpm: int | None = None
    ipm: int | None = None
    concurrent_videos: int | None = None


@dataclass(slots=True)
class Snapshot:
    keys: dict[str, KeyEntry] = field(default_factory=dict)
    models: dict[str, ModelEntry] = field(default_factory=dict)
    upstreams_for: dict[str, tuple[UpstreamEntry, ...]] = field(default_factory=dict)
    upstreams: dict[int, UpstreamEntry] = field(default_factory=dict)
    prices: dict[str, tuple[PriceEntry, ...]] = field(default_factory=dict)  # newest first
    budgets: dict[tuple[str, int], tuple[BudgetEntry, ...]] = field(default_factory=dict)  # (scope, id)
    limits: dict[tuple[int, str], LimitEntry] = field(default_factory=dict)  # (key id, model id or "")
    loaded_at: float = 0.0  # time.monotonic() of the load
    revision: int = 0  # the rows' revision number when they were read
    checked_at: float = 0.0  # when the revision number was last found unchanged (or the load)
