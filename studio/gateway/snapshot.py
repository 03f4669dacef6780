"""In-process snapshot of keys, catalog and upstreams: the /v1 hot path reads only this.

A /v1 request must not wait on the database. The snapshot is loaded once (one thread hop on a
cold process), served from memory afterwards, refreshed in the background when older than
``STUDIO_CACHE_TTL`` (so several processes agree within seconds), and dropped at once when a row
changes in this process.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db.models.signals import post_delete, post_save

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class KeyEntry:
    id: int
    user_id: int
    team_id: int | None
    prefix: str
    allowed_models: frozenset[str] | None  # None: every model
    expires_at: float | None  # epoch seconds


@dataclass(frozen=True, slots=True)
class ModelEntry:
    model_id: str
    kind: str
    routes: frozenset[str]
    capabilities: dict[str, Any]
    default_protocol: str
    owned_by: str
    created: int


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


@dataclass(slots=True)
class Snapshot:
    keys: dict[str, KeyEntry] = field(default_factory=dict)
    models: dict[str, ModelEntry] = field(default_factory=dict)
    upstreams_for: dict[str, tuple[UpstreamEntry, ...]] = field(default_factory=dict)
    upstreams: dict[int, UpstreamEntry] = field(default_factory=dict)
    loaded_at: float = 0.0


def load() -> Snapshot:
    """Read every active key, enabled model and enabled upstream (sync; a few queries)."""
    from studio.models import ApiKey, PlatformModel, Upstream

    snap = Snapshot(loaded_at=time.monotonic())
    for key in ApiKey.objects.filter(revoked=False).only(
        "id", "owner_id", "team_id", "prefix", "allowed_models", "expires_at", "secret_hash"
    ):
        snap.keys[key.secret_hash] = KeyEntry(
            id=key.id,
            user_id=key.owner_id,
            team_id=key.team_id,
            prefix=key.prefix,
            allowed_models=frozenset(key.allowed_models) if key.allowed_models else None,
            expires_at=key.expires_at.timestamp() if key.expires_at else None,
        )
    for m in PlatformModel.objects.filter(enabled=True):
        snap.models[m.model_id] = ModelEntry(
            model_id=m.model_id,
            kind=m.kind,
            routes=frozenset(m.routes or ()),
            capabilities=m.capabilities or {},
            default_protocol=m.default_protocol,
            owned_by=m.owned_by,
            created=int(m.created.timestamp()),
        )
    serving: dict[str, list[UpstreamEntry]] = {}
    for up in Upstream.objects.filter(enabled=True):
        try:
            credential = up.credential
        except ValueError:
            logger.error("upstream %s: credential cannot be decrypted; skipped", up.name)
            continue
        entry = UpstreamEntry(
            id=up.id,
            name=up.name,
            protocol=up.protocol,
            base_url=up.base_url.rstrip("/"),
            credential=credential,
            priority=up.priority,
            weight=max(up.weight, 1),
            timeout=up.timeout,
            model_map=dict(up.model_map or {}),
        )
        snap.upstreams[up.id] = entry
        for model_id in entry.model_map:
            serving.setdefault(model_id, []).append(entry)
    snap.upstreams_for = {
        m: tuple(sorted(ups, key=lambda u: (-u.priority, u.name))) for m, ups in serving.items()
    }
    return snap


class _State:
    snapshot: Snapshot | None = None
    refreshing: asyncio.Task | None = None
    generation: int = 0  # bumped on invalidation, so a refresh started before it is discarded


_state = _State()


def peek() -> Snapshot | None:
    """The snapshot if one is loaded; never touches the database."""
    return _state.snapshot


async def get() -> Snapshot:
    snap = _state.snapshot
    if snap is None:
        return await _reload()
    if time.monotonic() - snap.loaded_at > settings.STUDIO_CACHE_TTL and _state.refreshing is None:
        # Serve the current snapshot; refresh behind it.
        _state.refreshing = asyncio.get_running_loop().create_task(_background_refresh())
    return snap


MISS_RELOAD_INTERVAL = 1.0


async def reload_after_miss() -> Snapshot | None:
    """A key another process just created is unknown here until the next refresh. On a miss,
    reload at once — but at most once a second, so bad keys cannot hammer the database."""
    snap = _state.snapshot
    if snap is not None and time.monotonic() - snap.loaded_at < MISS_RELOAD_INTERVAL:
        return None
    return await _reload()


async def _reload() -> Snapshot:
    generation = _state.generation
    snap = await sync_to_async(load, thread_sensitive=True)()
    if generation == _state.generation:
        _state.snapshot = snap
    return snap


async def _background_refresh() -> None:
    try:
        await _reload()
    except Exception:  # keep serving the old snapshot; the next request retries
        logger.exception("refreshing the gateway snapshot failed")
    finally:
        _state.refreshing = None


def load_now() -> Snapshot:
    """Load synchronously (startup, management commands, tests)."""
    _state.snapshot = load()
    return _state.snapshot


def invalidate(**_: Any) -> None:
    _state.generation += 1
    _state.snapshot = None


def connect_invalidation() -> None:
    from studio.models import ApiKey, PlatformModel, Upstream

    for model in (ApiKey, PlatformModel, Upstream):
        post_save.connect(invalidate, sender=model, dispatch_uid=f"snapshot-save-{model.__name__}")
        post_delete.connect(invalidate, sender=model, dispatch_uid=f"snapshot-delete-{model.__name__}")
