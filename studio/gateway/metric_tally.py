"""The per-request metrics of /v1, added up in this process and handed to the metrics in bulk.

A request's metrics are five prometheus-client updates (its status counter, two histograms, its
tokens), and each update takes a lock and several calls; together they were a tenth of what the
production features add to a call. Here a request adds its values to plain numbers under one
lock instead. They reach prometheus-client's metrics (and, in multiprocess mode, the shared
folder) whenever the registry is collected in this process (``/metrics``, ``REGISTRY.collect``)
and at least once a ``interval`` from a background thread, so another process's scrape sees them
within that time, and ``flush`` hands over what is pending (shutdown).
"""

from __future__ import annotations

import bisect
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from studio.gateway.cost import Usage

logger = logging.getLogger(__name__)

Route = tuple[str, str, str]  # family, model, upstream


@dataclass(slots=True)
class RouteTally:
    """What the requests of one route added since the last hand-over. ``latency`` and
    ``first_byte`` count observations per histogram bucket (the last one: above every bound)."""

    statuses: dict[int, int]
    latency: list[int]
    first_byte: list[int]
    latency_sum: float = 0.0
    first_byte_sum: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    images: int = 0
    video_seconds: float = 0.0


Publish = Callable[[dict[Route, RouteTally]], None]


@dataclass(eq=False)
class Tally:
    bounds: tuple[float, ...]  # the histograms' upper bounds, without +Inf
    publish: Publish
    interval: float = 1.0
    pending: dict[Route, RouteTally] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    handing: threading.Lock = field(default_factory=threading.Lock)  # one hand-over at a time, in order
    thread: threading.Thread | None = None

    def __post_init__(self) -> None:
        os.register_at_fork(after_in_child=self._forked)

    def add(self, route: Route, status: int, seconds: float, first_byte: float, usage: Usage | None) -> None:
        bounds = self.bounds
        with self.lock:
            found = self.pending.get(route)
            if found is None:
                size = len(bounds) + 1
                found = self.pending[route] = RouteTally({}, [0] * size, [0] * size)
            statuses = found.statuses
            statuses[status] = statuses.get(status, 0) + 1
            # The first bucket whose bound is at least the value, as ``Histogram.observe`` finds it.
            found.latency[bisect.bisect_left(bounds, seconds)] += 1
            found.latency_sum += seconds
            found.first_byte[bisect.bisect_left(bounds, first_byte)] += 1
            found.first_byte_sum += first_byte
            if usage is not None:
                found.input_tokens += usage.input_tokens
                found.output_tokens += usage.output_tokens
                found.cached_tokens += usage.cached_tokens
                found.images += usage.image_count
                found.video_seconds += usage.video_seconds
        if self.thread is None:
            self._start()

    def flush(self) -> None:
        """Hand everything added so far to the metrics (returns once they hold it)."""
        with self.handing:
            with self.lock:
                pending, self.pending = self.pending, {}
            if pending:
                self.publish(pending)

    def _start(self) -> None:
        with self.lock:
            if self.thread is not None:
                return
            self.thread = threading.Thread(target=self._run, name="metrics-tally", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        wait = threading.Event().wait
        while True:
            wait(self.interval)
            try:
                self.flush()
            except Exception:  # a metric that cannot take a value must not stop the others
                logger.warning("handing request metrics over failed", exc_info=True)

    def _forked(self) -> None:
        """A forked child starts with no thread and nothing pending (the parent reports its own)."""
        self.pending, self.thread = {}, None
        self.lock, self.handing = threading.Lock(), threading.Lock()
