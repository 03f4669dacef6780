"""Prometheus metrics of the gateway, exposed at ``/metrics``.

With ``PROMETHEUS_MULTIPROC_DIR`` set (an empty folder shared by the processes of one host or
container, before they start) prometheus-client's multiprocess mode sums every process's
values, so any process answers for all of them; without it this process's registry is served.

Per-request cost is kept tiny: a /v1 request's values are added up in process memory
(``metric_tally``) and handed to these metrics in bulk, at least once a second and whenever this
process is scraped; label children are bound once per label set and cached here, and nothing
on the request path queries the database. What only the database knows (video tasks
by state, the oldest due one) and the breakers' state is read at scrape time.
``STUDIO_METRICS=0`` turns every update into a no-op.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client import multiprocess as prometheus_multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from studio.core.hot_settings import hot
from studio.core.video_states import ACTIVE_STATUSES
from studio.gateway import health, recorder_metrics, snapshot
from studio.gateway.cost import Usage
from studio.gateway.metric_tally import Route, RouteTally, Tally

CONTENT_TYPE = CONTENT_TYPE_LATEST
SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
ROUTE = ("family", "model", "upstream")


class Bound:
    """A metric's label children, bound once per label set (``labels()`` takes a lock and checks
    its arguments on every call)."""

    __slots__ = ("children", "metric")

    def __init__(self, metric: Any) -> None:
        self.metric = metric
        self.children: dict[tuple, Any] = {}

    def __call__(self, *labels: Any) -> Any:
        child = self.children.get(labels)
        if child is None:
            child = self.children[labels] = self.metric.labels(*(str(label) for label in labels))
        return child


def _publish(pending: dict[Route, RouteTally]) -> None:
    for route, found in pending.items():
        family, model, upstream = route
        for status, count in found.statuses.items():
            REQUESTS(family, model, upstream, status).inc(count)
        _observed(LATENCY(*route), found.latency, found.latency_sum)
        _observed(FIRST_BYTE(*route), found.first_byte, found.first_byte_sum)
        _used(model, found.input_tokens, found.output_tokens, found.cached_tokens, found.images, found.video_seconds)


def _observed(child: Any, buckets: list[int], total: float) -> None:
    """``child.observe`` of every value counted in ``buckets`` (per bucket, not cumulative) adding
    up to ``total``: what ``Histogram.observe`` adds, once per bucket rather than per value."""
    child._sum.inc(total)
    for value, count in zip(child._buckets, buckets, strict=True):
        if count:
            value.inc(count)


TALLY = Tally(SECONDS, _publish, interval=settings.STUDIO_METRICS_INTERVAL)


class _Pending:
    """Registered before the metrics it feeds: a collection of the registry (``/metrics`` of this
    process, ``REGISTRY.get_sample_value``) first hands them what the tally holds."""

    def collect(self) -> Iterator[Any]:
        TALLY.flush()
        return iter(())


REGISTRY.register(_Pending())

REQUESTS = Bound(Counter("studio_requests", "/v1 requests answered.", [*ROUTE, "status"]))
LATENCY = Bound(Histogram("studio_request_duration_seconds", "/v1 request latency, to the last byte.", ROUTE,
                          buckets=SECONDS))
FIRST_BYTE = Bound(Histogram("studio_time_to_first_byte_seconds", "/v1 time to the first byte of the answer.",
                             ROUTE, buckets=SECONDS))
UPSTREAM_ERRORS = Bound(Counter("studio_upstream_errors", "Failed upstream calls, by error kind.",
                                ["upstream", "kind"]))
RETRIES = Bound(Counter("studio_upstream_retries",
                        "Retryable upstream failures after which the call was tried on the next upstream.",
                        ["upstream"]))
FAILOVERS = Bound(Counter("studio_upstream_failovers", "Calls answered by an upstream after an earlier one failed.",
                          ["upstream"]))
TOKENS = Bound(Counter("studio_tokens", "Tokens the upstreams reported, by kind (input, output, cached).",
                       ["model", "kind"]))
IMAGES = Bound(Counter("studio_images", "Images made.", ["model"]))
VIDEO_SECONDS = Bound(Counter("studio_video_seconds", "Seconds of video made.", ["model"]))
VIDEO_FINISHED = Bound(Counter("studio_video_tasks_finished", "Video tasks that reached a final state.",
                               ["model", "state"]))
RECORDER = recorder_metrics  # its counters (failed and dropped records) are served with these
WEBSOCKETS = Gauge("studio_websocket_connections", "Open studio WebSocket connections.",
                   multiprocess_mode="livesum")


def enabled() -> bool:
    return hot.STUDIO_METRICS


def multiprocess() -> bool:
    return bool(settings.PROMETHEUS_MULTIPROC_DIR)


# -- updates (the request path: no query, no await) ---------------------------------------------
def request_done(family: str, model: str, upstream: str, status: int, seconds: float, first_byte: float,
                 usage: Usage | None = None) -> None:
    """A /v1 answer: counted, timed and (with ``usage``) its tokens and media added, through the tally."""
    TALLY.add((family, model, upstream), status, seconds, first_byte, usage)


def used(model: str, usage: Usage) -> None:
    _used(model, usage.input_tokens, usage.output_tokens, usage.cached_tokens, usage.image_count,
          usage.video_seconds)


def _used(model: str, input_tokens: int, output_tokens: int, cached_tokens: int, images: int,
          video_seconds: float) -> None:
    if input_tokens:
        TOKENS(model, "input").inc(input_tokens)
    if output_tokens:
        TOKENS(model, "output").inc(output_tokens)
    if cached_tokens:
        TOKENS(model, "cached").inc(cached_tokens)
    if images:
        IMAGES(model).inc(images)
    if video_seconds:
        VIDEO_SECONDS(model).inc(video_seconds)


def upstream_failed(upstream: str, kind: str, tried_next: bool) -> None:
    if not enabled():
        return
    UPSTREAM_ERRORS(upstream, kind).inc()
    if tried_next:
        RETRIES(upstream).inc()


def failed_over(upstream: str) -> None:
    if enabled():
        FAILOVERS(upstream).inc()


def video_finished(model: str, state: str, usage: Usage | None) -> None:
    if not enabled():
        return
    VIDEO_FINISHED(model, state).inc()
    if usage is not None:
        used(model, usage)


def websocket_opened() -> None:
    if enabled():
        WEBSOCKETS.inc()


def websocket_closed() -> None:
    if enabled():
        WEBSOCKETS.dec()


_names: dict[int, str] = {}


def upstream_name(upstream_id: int | None) -> str:
    """An upstream's name from the snapshot in memory (remembered: the snapshot may be reloading)."""
    if upstream_id is None:
        return ""
    name = _names.get(upstream_id)
    if name is None:
        snap = snapshot.peek()
        entry = snap.upstreams.get(upstream_id) if snap is not None else None
        if entry is None:
            return str(upstream_id)
        name = _names[upstream_id] = entry.name
    return name


# -- scrape time ----------------------------------------------------------------------------------
class ScrapeTime:
    """Values read when ``/metrics`` is asked: video tasks from the database, breakers from this
    process's view (which follows the shared one)."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from django.db.models import Count, Min

        from studio.models import VideoTask

        tasks = GaugeMetricFamily("studio_video_tasks", "Video tasks not yet final, by state.", labels=["state"])
        counts = {row["status"]: row["n"] for row in
                  VideoTask.objects.filter(status__in=ACTIVE_STATUSES).values("status").annotate(n=Count("id"))}
        for state in ACTIVE_STATUSES:
            tasks.add_metric([str(state)], counts.get(state, 0))
        yield tasks
        oldest = VideoTask.objects.filter(status__in=ACTIVE_STATUSES, next_poll_at__lte=_now()).aggregate(
            oldest=Min("next_poll_at"))["oldest"]
        yield GaugeMetricFamily("studio_video_oldest_due_seconds",
                                "Age of the oldest video task due for a poll (0 when none is waiting).",
                                value=max(time.time() - oldest.timestamp(), 0.0) if oldest else 0.0)
        snap = snapshot.peek()
        upstreams = snap.upstreams.values() if snap is not None else ()
        breakers = GaugeMetricFamily("studio_upstream_breaker_open", "1 while the upstream's circuit breaker is open.",
                                     labels=["upstream"])
        failures = GaugeMetricFamily("studio_upstream_consecutive_failures",
                                     "Consecutive failures of the upstream.", labels=["upstream"])
        for up in upstreams:
            breakers.add_metric([up.name], 1.0 if health.view.is_open(up.id) else 0.0)
            failures.add_metric([up.name], health.view.failures.get(up.id, 0))
        yield breakers
        yield failures


def _now():
    from django.utils import timezone

    return timezone.now()


class _ThisProcess:
    def collect(self) -> Iterator[Any]:
        return REGISTRY.collect()


def exposition() -> bytes:
    """The text format of every metric: summed over the processes in multiprocess mode."""
    registry = CollectorRegistry()
    if multiprocess():
        TALLY.flush()  # this process's latest values are in the folder, the others' at most a second old
        prometheus_multiprocess.MultiProcessCollector(registry)
    else:
        registry.register(_ThisProcess())
    registry.register(ScrapeTime())
    return generate_latest(registry)


def process_exited() -> None:
    """Hand over what the tally holds, and drop this process's live gauges (WebSocket
    connections) from the shared folder."""
    TALLY.flush()
    if multiprocess():
        prometheus_multiprocess.mark_process_dead(os.getpid())
