"""Choosing upstreams: priority tiers, weighted order within a tier, and a circuit breaker.

Health lives in process memory so choosing costs no database query; failures and recoveries are
also written to the Upstream row off the request path (see ``recording``).
"""

from __future__ import annotations

import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from .errors import GatewayError, NoUpstream
from .snapshot import Snapshot, UpstreamEntry

T = TypeVar("T")

FAILURES_TO_OPEN = 3
OPEN_SECONDS = 30.0


@dataclass(slots=True)
class _Health:
    failures: int = 0
    open_until: float = 0.0


_health: dict[int, _Health] = {}


def candidates(snapshot: Snapshot, model_id: str, rng: random.Random | None = None) -> list[UpstreamEntry]:
    """Upstreams for the model in the order to try them.

    Highest priority tier first; inside a tier a weighted random order (so traffic splits by
    weight). Upstreams whose breaker is open go last: they are still tried when nothing else
    is left, which doubles as the half-open probe.
    """
    ups = snapshot.upstreams_for.get(model_id, ())
    if not ups:
        raise NoUpstream(f"no upstream is configured for model '{model_id}'", param="model")
    if len(ups) == 1:
        return [ups[0]]  # the common case needs no shuffling
    rng = rng or random
    tiers: dict[int, list[UpstreamEntry]] = {}
    for up in ups:
        tiers.setdefault(up.priority, []).append(up)
    ordered: list[UpstreamEntry] = []
    for priority in sorted(tiers, reverse=True):
        pool = list(tiers[priority])
        while pool:
            pick = rng.choices(pool, weights=[u.weight for u in pool])[0]
            pool.remove(pick)
            ordered.append(pick)
    now = time.monotonic()
    healthy = [u for u in ordered if _health.get(u.id, _Health()).open_until <= now]
    tripped = [u for u in ordered if u not in healthy]
    return healthy + tripped


def record_success(upstream: UpstreamEntry) -> None:
    health = _health.get(upstream.id)
    if health is not None:
        health.failures = 0
        health.open_until = 0.0


def record_failure(upstream: UpstreamEntry) -> None:
    health = _health.setdefault(upstream.id, _Health())
    health.failures += 1
    if health.failures >= FAILURES_TO_OPEN:
        health.open_until = time.monotonic() + OPEN_SECONDS


def reset_health() -> None:
    _health.clear()


async def with_failover(
    upstreams: list[UpstreamEntry], call: Callable[[UpstreamEntry], Awaitable[T]]
) -> tuple[UpstreamEntry, T]:
    """Call upstreams in order until one succeeds; only retryable errors move on."""
    last: GatewayError | None = None
    for up in upstreams:
        try:
            result = await call(up)
        except GatewayError as exc:
            if exc.retryable:
                record_failure(up)
                last = exc
                continue
            raise
        record_success(up)
        return up, result
    assert last is not None
    raise last


async def stream_with_failover(
    upstreams: list[UpstreamEntry],
    open_stream: Callable[[UpstreamEntry], AsyncIterator[T]],
    on_upstream: Callable[[UpstreamEntry], None] | None = None,
) -> AsyncIterator[T]:
    """Relay the first upstream stream that yields; fail over only before anything was yielded.

    Once an item has been handed on, the client has seen bytes from that upstream: switching
    would splice two different answers, so later errors propagate instead.
    """
    last: GatewayError | None = None
    for up in upstreams:
        sent = False
        try:
            async for item in open_stream(up):
                if not sent:
                    sent = True
                    record_success(up)
                    if on_upstream is not None:
                        on_upstream(up)
                yield item
            if not sent and on_upstream is not None:
                on_upstream(up)
            return
        except GatewayError as exc:
            if sent or not exc.retryable:
                if not sent and on_upstream is not None:
                    on_upstream(up)
                raise
            record_failure(up)
            last = exc
    assert last is not None
    raise last
