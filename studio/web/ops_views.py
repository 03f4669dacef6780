"""Operations endpoints: ``/readyz`` (can this process serve?) and ``/metrics`` (Prometheus).

``/healthz`` (the process answers) is answered by ``studio.serving`` before Django, touching
nothing. ``/readyz`` checks what serving needs, each check named in the JSON answer, and
answers 503 when one fails: the database, the cache, the channel layer, the media storage,
every migration applied, and a worker heartbeat newer than ``STUDIO_READY_WORKER_SECONDS``.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import logging
import time
import uuid
from collections.abc import Callable

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.core.cache import cache
from django.core.files.storage import FileSystemStorage, default_storage
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from studio.gateway import heartbeat, metrics

logger = logging.getLogger(__name__)

CHECK_TIMEOUT = 5.0  # seconds a single check may take before it counts as failed


class _Migrated:
    """Once every migration is applied it stays so until the code changes (a new process)."""

    done = False


def check_database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return "ok"


def check_migrations() -> str:
    if not _Migrated.done:
        executor = MigrationExecutor(connection)
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
        if pending:
            raise RuntimeError(f"{len(pending)} migration(s) not applied, e.g. {pending[0][0]}")
        _Migrated.done = True
    return "ok"


def check_cache() -> str:
    key = f"{settings.STUDIO_REDIS_PREFIX}:readyz:{uuid.uuid4().hex}"
    cache.set(key, "1", timeout=10)
    if cache.get(key) != "1":
        raise RuntimeError("a value written to the cache could not be read back")
    cache.delete(key)
    return "ok"


def check_storage() -> str:
    storage = default_storage
    if isinstance(storage, FileSystemStorage):
        # Nothing stored yet is fine; the folder must be creatable and writable.
        location = settings.MEDIA_ROOT
        location.mkdir(parents=True, exist_ok=True)
        probe = location / f".readyz-{uuid.uuid4().hex}"
        probe.write_bytes(b"")
        probe.unlink()
    else:
        storage.listdir("")  # a bucket that is missing or unreadable raises
    return "ok"


def check_worker() -> str:
    age = heartbeat.age()
    if age is None:
        raise RuntimeError("no worker heartbeat seen (is a worker running? a separate one needs REDIS_URL)")
    if age > settings.STUDIO_READY_WORKER_SECONDS:
        raise RuntimeError(f"the last worker heartbeat is {age:.0f} s old")
    return f"ok ({age:.1f} s ago)"


async def check_channel_layer() -> str:
    layer = get_channel_layer()
    if layer is None:
        raise RuntimeError("no channel layer is configured")
    # A plain channel, not a process-specific one ("...!..."): those are read by the one receive loop
    # this process's consumers already run, which would never hand this message over.
    channel = f"readyz.{uuid.uuid4().hex}"
    await layer.send(channel, {"type": "readyz.ping"})
    message = await layer.receive(channel)
    if message.get("type") != "readyz.ping":
        raise RuntimeError("the channel layer returned another message")
    return "ok"


SYNC_CHECKS: dict[str, Callable[[], str]] = {
    "database": check_database,
    "migrations": check_migrations,
    "cache": check_cache,
    "storage": check_storage,
    "worker": check_worker,
}


def _outcome(name: str, started: float, detail: str | None, error: BaseException | None) -> dict[str, object]:
    if error is not None:
        detail = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        logger.warning("readiness check %s failed: %s", name, detail)
    return {"ok": error is None, "detail": detail, "ms": round((time.perf_counter() - started) * 1000, 1)}


def run_sync_checks() -> dict[str, dict[str, object]]:
    results = {}
    for name, check in SYNC_CHECKS.items():
        started = time.perf_counter()
        try:
            results[name] = _outcome(name, started, check(), None)
        except Exception as exc:
            results[name] = _outcome(name, started, None, exc)
    return results


async def run_channel_check() -> dict[str, object]:
    started = time.perf_counter()
    try:
        return _outcome("channel_layer", started, await asyncio.wait_for(check_channel_layer(), CHECK_TIMEOUT), None)
    except Exception as exc:
        return _outcome("channel_layer", started, None, exc)


@never_cache
@require_GET
async def readyz(request: HttpRequest) -> JsonResponse:
    checks = await sync_to_async(run_sync_checks)()
    checks["channel_layer"] = await run_channel_check()
    ready = all(check["ok"] for check in checks.values())
    return JsonResponse({"ready": ready, "checks": checks}, status=200 if ready else 503)


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


@never_cache
@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    if not settings.STUDIO_METRICS:
        return HttpResponse("metrics are turned off (STUDIO_METRICS=0)\n", status=404, content_type="text/plain")
    token = settings.STUDIO_METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            response = HttpResponse("a bearer token is required\n", status=401, content_type="text/plain")
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
            return response
    elif not _loopback(request.META.get("REMOTE_ADDR", "")):
        return HttpResponse("metrics answer loopback clients only unless STUDIO_METRICS_TOKEN is set\n",
                            status=403, content_type="text/plain")
    return HttpResponse(metrics.exposition(), content_type=metrics.CONTENT_TYPE)
