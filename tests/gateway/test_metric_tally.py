"""The per-request metrics tally: what it hands over equals what prometheus-client would have
counted value by value, nothing is lost or counted twice when requests and hand-overs meet, and
values reach the metrics within the interval with no scrape."""

from __future__ import annotations

import os
import threading
import time

import pytest
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram

from studio.gateway import metrics
from studio.gateway.cost import Usage
from studio.gateway.metric_tally import Route, RouteTally, Tally
from tests.fresh_interpreter import printed

BOUNDS = (0.01, 0.1, 1.0)


def samples(registry: CollectorRegistry) -> dict[tuple, float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in registry.collect() for s in family.samples if not s.name.endswith("_created")}


def pair() -> tuple[CollectorRegistry, Counter, Histogram]:
    registry = CollectorRegistry()
    return (registry, Counter("t_requests", "r", ["route", "status"], registry=registry),
            Histogram("t_seconds", "s", ["route"], buckets=BOUNDS, registry=registry))


def test_what_it_hands_over_is_what_observing_each_value_would_have_counted() -> None:
    values = [0.0, 0.005, 0.01, 0.010001, 0.1, 0.5, 1.0, 7.0, 7.0]  # on and beside each bound, and above all
    direct, requests, seconds = pair()
    for n, value in enumerate(values):
        requests.labels("a", str(200 if n % 3 else 429)).inc()
        seconds.labels("a").observe(value)

    tallied, t_requests, t_seconds = pair()

    def publish(pending: dict[Route, RouteTally]) -> None:
        for (family, _, _), found in pending.items():
            for status, count in found.statuses.items():
                t_requests.labels(family, str(status)).inc(count)
            metrics._observed(t_seconds.labels(family), found.latency, found.latency_sum)

    tally = Tally(BOUNDS, publish, interval=3600)
    for n, value in enumerate(values):
        tally.add(("a", "m", "u"), 200 if n % 3 else 429, value, 0.0, None)
    assert samples(tallied) == {}  # nothing handed over yet
    tally.flush()
    assert samples(tallied) == pytest.approx(samples(direct))


def test_requests_counted_while_hand_overs_run_are_each_counted_once() -> None:
    handed: list[int] = []
    tally = Tally(BOUNDS, lambda pending: handed.append(sum(sum(f.statuses.values()) for f in pending.values())),
                  interval=3600)
    stop = threading.Event()

    def hand_over() -> None:
        while not stop.is_set():
            tally.flush()

    def requests() -> None:
        for n in range(5000):
            tally.add(("chat", f"m{n % 7}", "u"), 200, 0.05, 0.01, Usage(input_tokens=1))

    flusher = threading.Thread(target=hand_over)
    flusher.start()
    workers = [threading.Thread(target=requests) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    stop.set()
    flusher.join()
    tally.flush()
    assert sum(handed) == 20_000 and len(handed) > 1


def test_values_reach_the_metrics_within_the_interval_with_no_scrape() -> None:
    arrived = threading.Event()
    found: list[RouteTally] = []

    def publish(pending: dict[Route, RouteTally]) -> None:
        found.extend(pending.values())
        arrived.set()

    tally = Tally(BOUNDS, publish, interval=0.05)
    tally.add(("images", "m", "u"), 200, 0.5, 0.2,
              Usage(input_tokens=4, output_tokens=9, cached_tokens=2, images=[("1K", "auto")], token_images=1))
    assert arrived.wait(5)
    [route] = found
    assert (route.statuses, route.latency, route.first_byte) == ({200: 1}, [0, 0, 1, 0], [0, 0, 1, 0])
    assert (route.input_tokens, route.output_tokens, route.cached_tokens, route.images) == (4, 9, 2, 2)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_starts_with_nothing_pending_and_no_thread() -> None:
    """The parent is a fresh interpreter: a child forked from the test process would inherit every
    earlier test's threads and native state, which it cannot always clean up (a video scaler's own
    threads, joined in a child that does not have them, hang it)."""
    script = ("import os\n"
              "from studio.gateway.metric_tally import Tally\n"
              f"tally = Tally({BOUNDS!r}, lambda pending: None, interval=3600)\n"
              "tally.add(('chat', 'm', 'u'), 200, 0.05, 0.01, None)\n"
              "pid = os.fork()\n"
              "if pid == 0:  # the child: report through the exit status only\n"
              "    os._exit(0 if tally.pending == {} and tally.thread is None else 1)\n"
              "_, status = os.waitpid(pid, 0)\n"
              "print(os.waitstatus_to_exitcode(status), len(tally.pending))\n")
    assert printed(script) == ["0", "1"]  # the parent still has its own to report


def test_a_request_reaches_the_gateway_metrics_at_once_when_they_are_read(settings) -> None:
    model = f"tally-{time.monotonic_ns()}"
    metrics.request_done("chat", model, "up", 200, 0.2, 0.1, Usage(input_tokens=11, output_tokens=5))
    # Collecting the registry (what /metrics and get_sample_value do) hands the tally over first.
    assert REGISTRY.get_sample_value("studio_requests_total",
                                     {"family": "chat", "model": model, "upstream": "up", "status": "200"}) == 1
    assert REGISTRY.get_sample_value("studio_tokens_total", {"model": model, "kind": "input"}) == 11
    assert REGISTRY.get_sample_value("studio_request_duration_seconds_bucket",
                                     {"family": "chat", "model": model, "upstream": "up", "le": "0.25"}) == 1
