"""The engine's wall clock (epoch seconds), one place so tests can move time."""

from __future__ import annotations

import time


def now() -> float:
    return time.time()
