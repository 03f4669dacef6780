"""The fault suite's counts (requests tried, 5xx, leaks, listener hits, tasks lost, vendor answers
of the wrong shape that went wrong), printed at the end."""

from __future__ import annotations

from collections import Counter

counts: Counter[str] = Counter()
NAMES = ("requests tried", "unexpected 5xx", "4xx without the family's body", "2xx without a usage record",
         "cross-user leaks", "SSRF attempts", "listener hits", "fault scenarios", "records written twice",
         "tasks lost", "vendor answers gone wrong")


def add(name: str, n: int = 1) -> None:
    counts[name] += n


def summary() -> list[str]:
    return [f"{name}: {counts[name]}" for name in NAMES if name in counts or name in NAMES[:2]]
