"""The in-process snapshot: loaded once, checked behind requests after its TTL (loaded again when
its rows' revision moved, or when it is older than the longest age), dropped on changes, and
reloaded on a key miss at most once a second."""

from __future__ import annotations

import asyncio
import time

import pytest
from asgiref.sync import sync_to_async
from django.db import transaction

from studio.gateway import snapshot
from studio.models import ApiKey, PlatformModel, Upstream

pytestmark = pytest.mark.django_db(transaction=True)


def add_upstream(name: str, priority: int, **fields) -> Upstream:
    row = Upstream(name=name, protocol="openai", base_url=f"http://{name}.test/v1/", priority=priority,
                   model_map={"omicron-4-mini": "vendor-mini"}, **fields)
    row.credential = f"secret-{name}"
    row.save()
    return row


def test_load_reads_active_keys_enabled_models_and_upstreams(alice, make_account):
    bob = make_account("bob")
    ApiKey.objects.filter(id=bob.key.id).update(revoked=True)
    PlatformModel.objects.filter(model_id="epsilon-4.5").update(enabled=False)
    add_upstream("zeta", 40)
    add_upstream("alpha", 40)
    add_upstream("off", 99, enabled=False)
    snap = snapshot.load()
    assert {k.id for k in snap.keys.values()} == {alice.key.id}
    assert "epsilon-4.5" not in snap.models and "omicron-4-mini" in snap.models
    names = [u.name for u in snap.upstreams_for["omicron-4-mini"]]
    assert names[:2] == ["alpha", "zeta"] and "off" not in names  # priority, then name
    entry = snap.upstreams_for["omicron-4-mini"][0]
    assert entry.base_url == "http://alpha.test/v1" and entry.credential == "secret-alpha"


def test_an_undecryptable_credential_skips_only_that_upstream(catalog):
    add_upstream("good", 40)
    broken = add_upstream("broken", 50)
    Upstream.objects.filter(id=broken.id).update(credential_encrypted="not-a-token")
    snap = snapshot.load()
    assert broken.id not in snap.upstreams and any(u.name == "good" for u in snap.upstreams.values())


async def test_get_loads_once_then_serves_from_memory(catalog, count_queries):
    first = await snapshot.get()
    count_queries["n"] = 0
    assert await snapshot.get() is first
    assert count_queries["n"] == 0


def _change_elsewhere() -> None:
    """A change as another process makes it, whose announcement never came: the row and the
    revision number change in the database, and nothing tells this process."""
    with transaction.atomic():
        PlatformModel.objects.filter(model_id="epsilon-4.5").update(enabled=False)
        snapshot.bump_revision()


async def test_an_old_snapshot_is_served_while_a_changed_one_loads(catalog, settings):
    settings.STUDIO_CACHE_TTL = 5
    first = await snapshot.get()
    await sync_to_async(_change_elsewhere)()
    assert await snapshot.get() is first  # within the TTL: served as it is
    first.checked_at -= 6  # checked longer ago than the TTL
    assert await snapshot.get() is first  # served at once, checked behind it
    await asyncio.wait_for(_refreshed(first), 10)
    fresh = await snapshot.get()
    assert fresh is not first and "epsilon-4.5" in first.models and "epsilon-4.5" not in fresh.models
    assert fresh.revision == first.revision + 1


async def test_an_old_snapshot_whose_rows_did_not_change_is_kept_after_one_query(catalog, settings, count_queries):
    settings.STUDIO_CACHE_TTL = 5
    first = await snapshot.get()
    first.checked_at -= 6
    checked = first.checked_at
    count_queries["n"] = 0
    assert await snapshot.get() is first
    await asyncio.wait_for(_checked(), 10)
    assert snapshot._state.snapshot is first and first.checked_at > checked + 5
    assert count_queries["n"] == 1, count_queries["sql"]  # the revision number, not the rows


async def test_rows_changed_behind_the_orm_are_loaded_after_the_longest_age(catalog, settings):
    settings.STUDIO_CACHE_TTL = 5
    settings.STUDIO_SNAPSHOT_MAX_AGE = 60
    first = await snapshot.get()
    await sync_to_async(PlatformModel.objects.filter(model_id="epsilon-4.5").update)(enabled=False)  # no revision
    first.checked_at -= 6
    await snapshot.get()
    await asyncio.wait_for(_checked(), 10)
    assert snapshot._state.snapshot is first  # the number did not move
    first.checked_at -= 6
    first.loaded_at -= 61  # loaded longer ago than the longest age
    await snapshot.get()
    await asyncio.wait_for(_refreshed(first), 10)
    assert "epsilon-4.5" not in (await snapshot.get()).models


def test_a_saved_or_deleted_row_moves_the_revision_with_its_transaction(catalog):
    start = snapshot.revision()
    row = add_upstream("counted", 10)
    assert snapshot.revision() == start + 1
    row.delete()
    assert snapshot.revision() == start + 2
    with pytest.raises(RuntimeError), transaction.atomic():
        add_upstream("rolled-back", 10)
        raise RuntimeError
    assert snapshot.revision() == start + 2  # the change did not happen: neither did the number's


def test_the_revision_row_is_made_again_when_missing(catalog):
    from studio.models import ConfigRevision

    ConfigRevision.objects.all().delete()
    assert snapshot.revision() == 0
    add_upstream("first-after", 10)
    assert snapshot.revision() == 1


async def _refreshed(old) -> None:
    while snapshot._state.snapshot is old or snapshot._state.refreshing is not None:
        await asyncio.sleep(0.01)


async def _checked() -> None:
    while snapshot._state.refreshing is not None:
        await asyncio.sleep(0.01)


async def test_a_row_change_invalidates_at_once(catalog):
    first = await snapshot.get()
    await sync_to_async(add_upstream)("fresh", 60)
    assert snapshot._state.snapshot is None
    second = await snapshot.get()
    assert second is not first and any(u.name == "fresh" for u in second.upstreams.values())


async def test_a_load_started_before_an_invalidation_is_not_kept(catalog, monkeypatch):
    original = snapshot.load
    started, release = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()

    def slow_load():
        loop.call_soon_threadsafe(started.set)
        asyncio.run_coroutine_threadsafe(release.wait(), loop).result()
        return original()

    monkeypatch.setattr(snapshot, "load", slow_load)
    loading = asyncio.create_task(snapshot.get())
    await asyncio.wait_for(started.wait(), 10)
    snapshot.invalidate()  # a row changed while the old read was in flight
    release.set()
    stale = await asyncio.wait_for(loading, 10)
    assert stale is not None and snapshot._state.snapshot is None  # served once, never cached


async def test_a_key_made_just_after_the_last_load_waits_for_the_next_one(catalog, make_account):
    snap = await snapshot.get()
    snap.loaded_at = time.monotonic() - 0.5  # loaded half a second ago
    carol = await sync_to_async(make_account)("carol")
    snapshot._state.snapshot = snap  # as in another process: this one saw no signal for carol's key
    both = await asyncio.gather(snapshot.reload_after_miss(carol.secret), snapshot.reload_after_miss("sk-other"))
    assert both[0] is both[1]  # misses at the same moment share one reload
    assert len(both[0].keys) == len(snap.keys) + 1
    assert both[0].loaded_at >= snap.loaded_at + snapshot.MISS_RELOAD_INTERVAL  # not before a second had passed


async def test_a_key_that_missed_on_the_newest_snapshot_is_refused_at_once(catalog):
    snap = await snapshot.get()
    snapshot.missed(snap, "sk-wrong")
    assert await snapshot.reload_after_miss("sk-wrong") is None
    assert snapshot._state.missed and b"sk-wrong" not in snapshot._state.missed  # kept as a digest only
    snapshot.invalidate()
    fresh = await snapshot.reload_after_miss("sk-wrong")  # a new snapshot: looked up again
    assert fresh is not None and fresh is not snap


def test_load_now_replaces_the_snapshot(catalog):
    snap = snapshot.load_now()
    assert snapshot._state.snapshot is snap and snap.models
