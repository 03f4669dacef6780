"""Upstream health: the circuit breaker every process agrees on, and the Upstream rows' health columns.

Choosing upstreams reads this process's view of the breakers (no query, no wait). Each call's
outcome updates the view at once and is queued; a short moment later, off the response path,
the queued outcomes are pushed in one go:

* with Redis, to the shared counters (``<prefix>:upstream-failures`` / ``-breakers`` hashes): a
  breaker opened or closed there is announced on the gateway event channel, so every process's
  view follows;
* to the Upstream rows: ``consecutive_failures``, ``last_error``, ``last_error_at``,
  ``last_success_at`` and ``breaker_open_until``, shown in the admin's upstream list.

Without Redis the breaker lives in this process's view alone (one process has nobody to agree with).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from dataclasses import dataclass, field
from datetime import UTC, datetime

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db.models import F

from studio.core.hot_settings import hot
from studio.gateway import events

logger = logging.getLogger(__name__)

FAILURES_TO_OPEN = 3
OPEN_SECONDS = 30.0
FLUSH_DELAY = 1.0
BREAKER = "breaker"


@dataclass
class BreakerView:
    """This process's view of the breakers: consecutive failures and open-until (epoch seconds)."""

    failures: dict[int, int] = field(default_factory=dict)
    open_until: dict[int, float] = field(default_factory=dict)

    def is_open(self, upstream_id: int, now: float | None = None) -> bool:
        return self.open_until.get(upstream_id, 0.0) > (now or time.time())

    def failed(self, upstream_id: int) -> None:
        count = self.failures.get(upstream_id, 0) + 1
        self.failures[upstream_id] = count
        if count >= FAILURES_TO_OPEN:
            self.open_until[upstream_id] = time.time() + OPEN_SECONDS

    def succeeded(self, upstream_id: int) -> None:
        self.failures.pop(upstream_id, None)
        self.open_until.pop(upstream_id, None)

    def apply(self, upstream_id: int, failures: int, open_until: float) -> None:
        self.failures[upstream_id] = failures
        if open_until > 0:
            self.open_until[upstream_id] = open_until
        else:
            self.open_until.pop(upstream_id, None)

    def clear(self) -> None:
        self.failures.clear()
        self.open_until.clear()


view = BreakerView()


@dataclass
class Outcomes:
    """Outcomes of one upstream's calls since the last push, in order."""

    failures_after_success: int = 0
    succeeded: bool = False
    last_error: str = ""
    error_at: datetime | None = None
    success_at: datetime | None = None


class Reporter:
    """Collects outcomes on one event loop and pushes them shortly after, in one batch."""

    def __init__(self) -> None:
        self.pending: dict[int, Outcomes] = {}
        self.task: asyncio.Task | None = None

    def add(self, upstream_id: int, error: str | None) -> None:
        outcome = self.pending.setdefault(upstream_id, Outcomes())
        now = datetime.now(UTC)
        if error is None:
            outcome.succeeded, outcome.success_at, outcome.failures_after_success = True, now, 0
        else:
            outcome.failures_after_success += 1
            outcome.last_error, outcome.error_at = error[:2000], now
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._push_later())

    async def _push_later(self) -> None:
        try:
            await asyncio.sleep(FLUSH_DELAY)
        finally:
            batch, self.pending, self.task = self.pending, {}, None
            if batch:
                await push(batch)

    async def drain(self) -> None:
        while self.task is not None:
            await asyncio.gather(self.task, return_exceptions=True)


_reporters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Reporter] = weakref.WeakKeyDictionary()


def _reporter() -> Reporter:
    loop = asyncio.get_running_loop()
    reporter = _reporters.get(loop)
    if reporter is None:
        reporter = _reporters[loop] = Reporter()
    return reporter


def record(upstream_id: int, error: str | None) -> None:
    """One call's outcome (``error`` None for a success); never waits."""
    if error is None:
        if upstream_id in view.failures or upstream_id in view.open_until:
            view.succeeded(upstream_id)
        elif not _stale_success(upstream_id):
            return  # healthy and recently noted: nothing to write
        _noted_success[upstream_id] = time.monotonic()
    else:
        view.failed(upstream_id)
        _noted_success.pop(upstream_id, None)
    with contextlib.suppress(RuntimeError):  # no running loop (sync callers): only the view changes
        _reporter().add(upstream_id, error)


# When this process last queued a success per upstream: a steady stream of successes updates
# ``last_success_at`` at most every ``STUDIO_UPSTREAM_SUCCESS_NOTE_SECONDS`` instead of once per request.
_noted_success: dict[int, float] = {}


def _stale_success(upstream_id: int) -> bool:
    every = hot.STUDIO_UPSTREAM_SUCCESS_NOTE_SECONDS
    return time.monotonic() - _noted_success.get(upstream_id, -every) >= every


def _keys() -> tuple[str, str]:
    prefix = settings.STUDIO_REDIS_PREFIX
    return f"{prefix}:upstream-failures", f"{prefix}:upstream-breakers"


async def push(batch: dict[int, Outcomes]) -> None:
    shared: dict[int, tuple[int, float]] = {}
    if events.shared():
        try:
            shared = await _push_shared(batch)
        except Exception:
            logger.warning("updating the shared breaker state failed", exc_info=True)
    try:
        await sync_to_async(write_rows)(batch, shared)
    except Exception:
        logger.warning("writing upstream health failed", exc_info=True)


# The shared breakers' update for a batch of outcomes, in one round trip. KEYS: the failures and
# breakers hashes; ARGV: the threshold, when a breaker opened now stays open until, then
# (upstream id, 1 if the last outcome was a success, failures since) per upstream. Per upstream:
# its failures, until when its breaker is open ("0": closed) and whether it was open before.
PUSH = """
local threshold, open_at, out = tonumber(ARGV[1]), ARGV[2], {}
for i = 3, #ARGV, 3 do
  local id, succeeded, failures = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local was_open = tonumber(redis.call('HGET', KEYS[2], id) or '0') ~= 0
  local count = failures
  if succeeded == '1' then
    redis.call('HSET', KEYS[1], id, failures)
  else
    count = redis.call('HINCRBY', KEYS[1], id, failures)
  end
  local open_until = '0'
  if count >= threshold then
    open_until = open_at
    redis.call('HSET', KEYS[2], id, open_at)
  elseif was_open then
    redis.call('HDEL', KEYS[2], id)
  end
  out[#out + 1] = count
  out[#out + 1] = open_until
  out[#out + 1] = was_open and 1 or 0
end
return out
"""


async def _push_shared(batch: dict[int, Outcomes]) -> dict[int, tuple[int, float]]:
    """Add ``batch`` to the shared failure counts (one script run on this loop's client) and
    announce each breaker that is, or was, open: every upstream's (failures, open until)."""
    client = events.loop_client()
    args: list[int | float | str] = [FAILURES_TO_OPEN, repr(time.time() + OPEN_SECONDS)]
    for upstream_id, outcome in batch.items():
        args += [upstream_id, int(outcome.succeeded), outcome.failures_after_success]
    found = await client.eval(PUSH, 2, *_keys(), *args)
    result: dict[int, tuple[int, float]] = {}
    for upstream_id, count, open_at, was_open in zip(batch, found[::3], found[1::3], found[2::3], strict=True):
        open_until = float(open_at)
        result[upstream_id] = (int(count), open_until)
        if open_until or was_open:
            await client.publish(events.channel(), _message(upstream_id, int(count), open_until))
    return result


def _message(upstream_id: int, failures: int, open_until: float) -> bytes:
    import orjson

    return orjson.dumps({"kind": BREAKER, "id": upstream_id, "failures": failures, "open_until": open_until})


def write_rows(batch: dict[int, Outcomes], shared: dict[int, tuple[int, float]]) -> None:
    from studio.models import Upstream

    for upstream_id, outcome in batch.items():
        changes: dict = {}
        if outcome.succeeded:
            changes.update(consecutive_failures=outcome.failures_after_success, last_success_at=outcome.success_at)
        else:
            changes["consecutive_failures"] = F("consecutive_failures") + outcome.failures_after_success
        if outcome.error_at is not None:
            changes.update(last_error=outcome.last_error, last_error_at=outcome.error_at)
        if upstream_id in shared:
            changes["consecutive_failures"] = shared[upstream_id][0]
            open_until = shared[upstream_id][1]
        else:
            open_until = view.open_until.get(upstream_id, 0.0)
        changes["breaker_open_until"] = datetime.fromtimestamp(open_until, UTC) if open_until else None
        Upstream.objects.filter(id=upstream_id).update(**changes)


def _on_breaker(message: dict) -> None:
    view.apply(int(message["id"]), int(message.get("failures", 0)), float(message.get("open_until", 0.0)))


_resyncs: set[asyncio.Task] = set()


def _on_resync(_: dict) -> None:
    with contextlib.suppress(RuntimeError):
        job = asyncio.get_running_loop().create_task(resync())
        _resyncs.add(job)
        job.add_done_callback(_resyncs.discard)


async def resync() -> None:
    """Load the shared breakers into this process's view (after (re)connecting)."""
    failures_key, breakers_key = _keys()
    client = events.loop_client()
    failures = await client.hgetall(failures_key)
    breakers = await client.hgetall(breakers_key)
    view.clear()
    for key, value in failures.items():
        view.apply(int(key), int(value), float(breakers.get(key, 0) or 0))


def reset() -> None:
    """Forget this process's view (tests)."""
    view.clear()
    _noted_success.clear()


async def drain() -> None:
    """Wait until queued outcomes are written (tests, shutdown)."""
    reporter = _reporters.get(asyncio.get_running_loop())
    if reporter is not None:
        await reporter.drain()


events.on(BREAKER, _on_breaker)
events.on(events.RESYNC, _on_resync)
