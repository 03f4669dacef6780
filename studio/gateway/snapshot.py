"""In-process snapshot of keys, catalog and upstreams: the /v1 hot path reads only this.

A /v1 request must not wait on the database. The snapshot is loaded once (one thread hop on a
cold process), served from memory afterwards, and dropped at once when a key, model or upstream
row is saved or deleted: in this process right away, and in every other process through the
gateway event channel (``events``: Redis pub/sub) once the change is committed, so the first
request after an admin change anywhere uses it.

The safety net, for an announcement a process missed (Redis away, a process starting): every
such change also moves the rows' revision number (``ConfigRevision``), in its own transaction.
When the snapshot is older than ``STUDIO_CACHE_TTL``, a background check reads that number (one
small query) and loads the rows again only when it moved; a load on every check cost a few
milliseconds of CPU per process at a small catalog, and in proportion to the keys at a large one.
Rows changed behind the ORM's back (SQL by hand) move no number: the snapshot is loaded again at
least every ``STUDIO_SNAPSHOT_MAX_AGE`` seconds for them.

The sandbox serves a model only while no real vendor account is mapped to it: mapping a real
upstream (enabled or not) takes the model off the sandbox, so a failing vendor is never "failed
over" to invented sandbox content.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from typing import Any

from asgiref.sync import sync_to_async
from django.db import transaction
from django.db.models import F
from django.db.models.signals import post_delete, post_save

from studio.core.entries import BudgetEntry, KeyEntry, LimitEntry, ModelEntry, Snapshot, UpstreamEntry
from studio.core.hot_settings import hot
from studio.gateway import events, settled_spend

SANDBOX_PROTOCOL = "sandbox"
INVALIDATE = "invalidate"

logger = logging.getLogger(__name__)


def load() -> Snapshot:
    """Read every active key, enabled model and enabled upstream (sync; a few queries)."""
    from studio.models import ApiKey, PlatformModel, Upstream

    now = time.monotonic()
    snap = Snapshot(loaded_at=now, checked_at=now, revision=revision())  # read before the rows
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
            display_name=m.display_name or m.model_id,
            description=m.description,
        )
    serving: dict[str, list[UpstreamEntry]] = {}
    rows = list(Upstream.objects.all())
    vendor_models = {m for up in rows if up.protocol != SANDBOX_PROTOCOL for m in (up.model_map or {})}
    for up in rows:
        if not up.enabled:
            continue
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
            if up.protocol == SANDBOX_PROTOCOL and model_id in vendor_models:
                continue  # a real vendor serves it: the sandbox never stands in
            serving.setdefault(model_id, []).append(entry)
    snap.upstreams_for = {
        m: tuple(sorted(ups, key=lambda u: (-u.priority, u.name))) for m, ups in serving.items()
    }
    from studio.gateway import prices

    snap.prices = prices.load_all()
    snap.budgets = load_budgets()
    snap.limits = load_limits(snap)
    return snap


def load_budgets() -> dict[tuple[str, int], tuple[BudgetEntry, ...]]:
    """Enabled budgets, each with what the records of its current period already spent."""
    from studio.gateway import budgets, clock
    from studio.gateway.cost import to_nano
    from studio.models import Budget

    now = clock.now()
    found: dict[tuple[str, int], list[BudgetEntry]] = {}
    for b in Budget.objects.filter(enabled=True).select_related("api_key", "user", "team"):
        start, _ = budgets.window(b.period, now)
        field = {"key": "api_key_id", "user": "user_id", "team": "team_id"}[b.scope]
        target = {"key": b.api_key_id, "user": b.user_id, "team": b.team_id}[b.scope]
        spent = settled_spend.spent(b.id, field, target, start, now)
        entry = BudgetEntry(id=b.id, scope=b.scope, target_id=target, limit_nano=to_nano(b.limit_usd),
                            period=b.period, soft_percent=b.soft_percent, base_nano=to_nano(spent),
                            base_window=start, label=f"the budget of {b.scope_label}")
        found.setdefault((b.scope, target), []).append(entry)
    return {k: tuple(v) for k, v in found.items()}


def load_limits(snap: Snapshot) -> dict[tuple[int, str], LimitEntry]:
    """Each key's limits per model scope: its own row, field by field over its team's defaults."""
    from studio.models import RateLimit

    own: dict[tuple[int, str], RateLimit] = {}
    team: dict[tuple[int, str], RateLimit] = {}
    for row in RateLimit.objects.all():
        if row.api_key_id is not None:
            own[(row.api_key_id, row.model_id)] = row
        elif row.team_id is not None:
            team[(row.team_id, row.model_id)] = row
    out: dict[tuple[int, str], LimitEntry] = {}
    if not own and not team:
        return out
    fields = ("rpm", "tpm", "ipm", "concurrent_videos")
    for key in snap.keys.values():
        scopes = {s for (k, s) in own if k == key.id} | {s for (t, s) in team if t == key.team_id}
        for scope in scopes:
            mine, theirs = own.get((key.id, scope)), team.get((key.team_id or 0, scope))
            values = {}
            for name in fields:
                value = getattr(mine, name) if mine is not None else None
                values[name] = value if value is not None else (getattr(theirs, name) if theirs is not None else None)
            if any(v is not None for v in values.values()):
                out[(key.id, scope)] = LimitEntry(**values)
    return out


class _State:
    snapshot: Snapshot | None = None
    refreshing: asyncio.Task | None = None
    generation: int = 0  # bumped on invalidation, so a refresh started before it is discarded
    miss_reload: asyncio.Task | None = None  # the reload that unknown keys wait for
    missed_on: Snapshot | None = None  # the snapshot ``missed`` keys were looked up in
    missed: set[bytes] = set()  # noqa: RUF012 - replaced, never mutated in place, on the class


_state = _State()


async def get() -> Snapshot:
    snap = _state.snapshot
    if snap is None:
        return await _reload()
    if time.monotonic() - snap.checked_at > hot.STUDIO_CACHE_TTL and _state.refreshing is None:
        # Serve the current snapshot; check (and maybe refresh) behind it.
        _state.refreshing = asyncio.get_running_loop().create_task(_background_refresh())
    return snap


def revision() -> int:
    """The revision number of the snapshot's rows (sync; one query)."""
    from studio.models import ConfigRevision

    return ConfigRevision.objects.filter(pk=1).values_list("number", flat=True).first() or 0


def bump_revision() -> None:
    """Move the revision number on, in the caller's transaction (a saved or deleted row's)."""
    from studio.models import ConfigRevision

    row = ConfigRevision.objects.filter(pk=1)
    if not row.update(number=F("number") + 1):  # the row is gone (a flushed database): made again
        ConfigRevision.objects.get_or_create(pk=1)
        row.update(number=F("number") + 1)


MISS_RELOAD_INTERVAL = 1.0
MISSED_KEYS_KEPT = 10_000


async def reload_after_miss(key: str) -> Snapshot | None:
    """A key another process just created is unknown here until the next refresh. On a miss,
    reload at once, but at most once a second, so bad keys cannot hammer the database: a miss
    soon after a reload waits for the next one (misses at the same moment share it), so a key
    made just after this process last loaded is not refused. A key that missed on the newest
    snapshot already is refused at once (``None``)."""
    snap = _state.snapshot
    if snap is not None and snap is _state.missed_on and _digest(key) in _state.missed:
        return None
    loop = asyncio.get_running_loop()
    pending = _state.miss_reload
    if pending is None or pending.done() or pending.get_loop() is not loop:
        wait = 0.0 if snap is None else MISS_RELOAD_INTERVAL - (time.monotonic() - snap.loaded_at)
        pending = _state.miss_reload = loop.create_task(_reload_after(max(wait, 0.0)))
    return await asyncio.shield(pending)


def missed(snap: Snapshot, key: str) -> None:
    """``key`` is not in ``snap`` either: until the next snapshot, it is refused without waiting."""
    if _state.missed_on is not snap or len(_state.missed) >= MISSED_KEYS_KEPT:
        _state.missed_on, _state.missed = snap, set()
    _state.missed.add(_digest(key))


def _digest(key: str) -> bytes:
    return hashlib.blake2b(key.encode(), digest_size=16).digest()  # no secret kept in memory


async def _reload_after(delay: float) -> Snapshot:
    if delay > 0:
        await asyncio.sleep(delay)
    return await _reload()


async def _reload() -> Snapshot:
    generation = _state.generation
    snap = await sync_to_async(load, thread_sensitive=True)()
    if generation == _state.generation:
        _state.snapshot = snap
    return snap


async def _background_refresh() -> None:
    try:
        snap, generation = _state.snapshot, _state.generation
        if snap is not None and time.monotonic() - snap.loaded_at < hot.STUDIO_SNAPSHOT_MAX_AGE:
            number = await sync_to_async(revision, thread_sensitive=True)()
            if number == snap.revision and generation == _state.generation:
                snap.checked_at = time.monotonic()  # nothing changed: the rows stay as they are
                return
        await _reload()
    except Exception:  # keep serving the old snapshot; the next request retries
        logger.exception("refreshing the gateway snapshot failed")
    finally:
        _state.refreshing = None


def peek() -> Snapshot | None:
    """The snapshot in memory, if any, without loading (metrics, logs)."""
    return _state.snapshot


def load_now() -> Snapshot:
    """Load synchronously (startup, management commands, tests)."""
    _state.snapshot = load()
    return _state.snapshot


def invalidate(**_: Any) -> None:
    """Drop this process's snapshot (and the budgets' remembered spend: rows changed)."""
    _state.generation += 1
    _state.snapshot = None
    settled_spend.forget()


def changed(**_: Any) -> None:
    """A key, model or upstream row changed: drop the snapshot here now, and everywhere (this
    process again included) once the change is committed, so nobody reloads the old rows. The
    revision number moves with the change, for a process that misses the announcement."""
    invalidate()
    bump_revision()
    transaction.on_commit(announce_change)


def announce_change() -> None:
    invalidate()
    events.publish_sync({"kind": INVALIDATE})


def connect_invalidation() -> None:
    from studio.models import ApiKey, Budget, PlatformModel, Price, RateLimit, Upstream

    for model in (ApiKey, PlatformModel, Upstream, Price, Budget, RateLimit):
        post_save.connect(changed, sender=model, dispatch_uid=f"snapshot-save-{model.__name__}")
        post_delete.connect(changed, sender=model, dispatch_uid=f"snapshot-delete-{model.__name__}")


def _on_event(_: dict) -> None:
    invalidate()


events.on(INVALIDATE, _on_event)
events.on(events.RESYNC, _on_event)
