"""The engine's clock is the wall clock in epoch seconds."""

from __future__ import annotations

import time

from studio.gateway import clock


def test_now_is_the_wall_clock():
    before = time.time()
    now = clock.now()
    assert before <= now <= time.time()
