"""Choosing upstreams: priority tiers, weighted order within a tier, and a circuit breaker.

Choosing reads this process's view of the breakers (``health``), so it costs no query; every
outcome is reported to ``health``, which shares it with the other processes and writes the
Upstream rows off the request path.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from studio.core import streams
from studio.core.entries import Snapshot, UpstreamEntry
from studio.core.errors import GatewayError, NoUpstream
from studio.gateway import health, metrics

T = TypeVar("T")


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
    healthy = [u for u in ordered if not health.view.is_open(u.id)]
    tripped = [u for u in ordered if u not in healthy]
    return healthy + tripped


def record_success(upstream: UpstreamEntry) -> None:
    health.record(upstream.id, None)


def record_failure(upstream: UpstreamEntry, error: GatewayError, tried_next: bool = False) -> None:
    health.record(upstream.id, f"{type(error).__name__}: {error.message}")
    metrics.upstream_failed(upstream.name, type(error).__name__, tried_next)


def reset_health() -> None:
    health.reset()


async def with_failover(
    upstreams: list[UpstreamEntry], call: Callable[[UpstreamEntry], Awaitable[T]]
) -> tuple[UpstreamEntry, T]:
    """Call upstreams in order until one succeeds; only retryable errors move on."""
    last: GatewayError | None = None
    for i, up in enumerate(upstreams):
        try:
            result = await call(up)
        except GatewayError as exc:
            if exc.retryable:
                record_failure(up, exc, tried_next=i + 1 < len(upstreams))
                last = exc
                continue
            raise
        record_success(up)
        if last is not None:
            metrics.failed_over(up.name)
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
    would splice two different answers, so later errors propagate instead. Each upstream's stream
    is closed when it is left, however it is left (an error, or this generator closed by a client
    that went away), so its connection is let go at once, not when the garbage collector finds it.
    """
    last: GatewayError | None = None
    for i, up in enumerate(upstreams):
        sent, items = False, None
        try:
            items = open_stream(up)
            async for item in items:
                if not sent:
                    sent = True
                    record_success(up)
                    if last is not None:
                        metrics.failed_over(up.name)
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
            record_failure(up, exc, tried_next=i + 1 < len(upstreams))
            last = exc
        finally:
            if items is not None:
                await streams.close(items)
    assert last is not None
    raise last
