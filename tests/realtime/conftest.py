"""Socket tests leave consumers and channel-layer readers behind on the test's event loop (a
refused or abandoned connection's application keeps waiting on the layer). They are stopped
here, on the test's own loop, so the loop's teardown never waits on a reader of the layer."""

from __future__ import annotations

import asyncio
import warnings

import pytest

STOP_WITHIN = 5.0


@pytest.fixture(autouse=True)
async def stop_leftover_tasks():
    yield
    me = asyncio.current_task()
    left = [task for task in asyncio.all_tasks() if task is not me and not task.done()]
    for task in left:
        task.cancel()
    if left:
        _, stuck = await asyncio.wait(left, timeout=STOP_WITHIN)
        for task in stuck:
            warnings.warn(f"a task would not stop: {task!r}", stacklevel=1)
