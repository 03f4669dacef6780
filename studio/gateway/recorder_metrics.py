"""Prometheus metrics of the background recorder (``recording``), served at ``/metrics``.

A record the recorder cannot write is work done and not yet billed: operators alert on
``studio_record_failures_total`` (failed writes, each tried again) and above all on
``studio_records_dropped_total`` (records given up after the last try). ``studio_records_pending``
is how many records wait to be written, retries included; it is set after each batch, in the
recorder's background task, never on the request path.
"""

from __future__ import annotations

from django.conf import settings
from prometheus_client import Counter, Gauge

PENDING = Gauge("studio_records_pending", "Records waiting to be written by the background recorder, retries included.",
                multiprocess_mode="livesum")
FAILURES = Counter("studio_record_failures", "Attempts to write a record that failed (the record is tried again).")
RETRIED = Counter("studio_records_retried", "Records queued again after a failed write.")
DROPPED = Counter("studio_records_dropped", "Records given up after their last try: the work is not recorded.")


def pending(count: int) -> None:
    if settings.STUDIO_METRICS:
        PENDING.set(count)


def failed(count: int = 1) -> None:
    if settings.STUDIO_METRICS:
        FAILURES.inc(count)


def retried() -> None:
    if settings.STUDIO_METRICS:
        RETRIED.inc()


def dropped() -> None:
    if settings.STUDIO_METRICS:
        DROPPED.inc()
