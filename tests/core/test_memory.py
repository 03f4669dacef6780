"""The allocator keeps a freed big frame's memory for the next one (glibc), keeps it while a
request is in flight and across short pauses between requests, gives it back once the process is
idle, or is left alone."""

from __future__ import annotations

import subprocess
import sys

import pytest

from studio.core.memory import keep_freed_memory

PROBE = """
import asyncio, os, sys
from studio.core import memory
tuned = memory.keep_freed_memory(int(sys.argv[1]))
page = os.sysconf("SC_PAGE_SIZE")
rss = lambda: int(open("/proc/self/statm").read().split()[1]) * page
before = rss()
frame = bytearray(b"x") * (20 * 1024 * 1024)
del frame
kept = (rss() - before) // (1024 * 1024)

async def idle():
    watcher = asyncio.ensure_future(memory.release_when_idle(0.05))
    memory.request_started()  # a long request (a stream): none ends for many intervals
    await asyncio.sleep(0.4)
    during = (rss() - before) // (1024 * 1024)
    memory.request_ended()
    await asyncio.sleep(0.5)
    watcher.cancel()
    return during

during = asyncio.run(idle())
print(tuned, kept, during, (rss() - before) // (1024 * 1024))
"""


def kept_after_a_frame(keep: int) -> tuple[str, int, int, int]:
    """(tuned?, MB kept once the frame is freed, MB kept while a request was in flight, MB kept
    once the process has been idle)."""
    out = subprocess.run([sys.executable, "-c", PROBE, str(keep)], capture_output=True, text=True, check=True)
    tuned, kept_mb, during_mb, idle_mb = out.stdout.split()
    return tuned, int(kept_mb), int(during_mb), int(idle_mb)


def test_nothing_is_tuned_when_asked_to_keep_nothing():
    assert keep_freed_memory(0) is False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_freed_frame_stays_mapped_for_the_next_one():
    tuned, kept, during, idle = kept_after_a_frame(256 * 1024 * 1024)
    assert tuned == "True" and kept >= 15  # the 20 MB are still mapped, ready for the next frame
    assert during >= 15  # kept while a request is in flight, though none has ended for a while
    assert idle < 5  # and given back once no request had been in flight for a moment
    tuned, kept, _, _ = kept_after_a_frame(0)
    assert tuned == "False" and kept < 5  # glibc's default: a big block goes back to the system


PAUSE = """
import asyncio, os
from studio.core import memory
memory.keep_freed_memory(256 * 1024 * 1024)
page = os.sysconf("SC_PAGE_SIZE")
rss = lambda: int(open("/proc/self/statm").read().split()[1]) * page
before = rss()
frame = bytearray(b"x") * (20 * 1024 * 1024)
del frame

async def burst():
    watcher = asyncio.ensure_future(memory.release_when_idle(0.4))
    for _ in range(3):  # requests with pauses shorter than the interval between them
        memory.request_started()
        await asyncio.sleep(0.05)
        memory.request_ended()
        await asyncio.sleep(0.25)
    during = (rss() - before) // (1024 * 1024)
    await asyncio.sleep(1.2)  # then idle for longer than twice the interval
    watcher.cancel()
    return during

during = asyncio.run(burst())
print(during, (rss() - before) // (1024 * 1024))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_memory_is_kept_across_pauses_shorter_than_the_idle_interval():
    out = subprocess.run([sys.executable, "-c", PAUSE], capture_output=True, text=True, check=True)
    during, idle = (int(v) for v in out.stdout.split())
    assert during >= 15  # the pauses between requests gave nothing back
    assert idle < 5  # a longer idle did


SETTLE = """
import gc, weakref
from studio.core import memory

class Node:
    pass

before = gc.get_threshold()
memory.settle_heap()
frozen = gc.get_freeze_count()
a, b = Node(), Node()
a.other, b.other = b, a  # a cycle made after start: reference counting alone never frees it
gone = weakref.ref(a)
del a, b
gc.collect()
kept = [[] for _ in range(1000)]
memory.settle_heap()  # a second server started in the same process: nothing more is frozen
print(frozen, before[0], gc.get_threshold()[0], gone() is None, gc.get_freeze_count() == frozen)
"""


def test_the_started_heap_is_kept_out_of_collections_once_and_later_cycles_are_still_freed():
    out = subprocess.run([sys.executable, "-c", SETTLE], capture_output=True, text=True, check=True)
    frozen, young_before, young_after, freed, once = out.stdout.split()
    assert int(frozen) > 1000  # what was alive at start is frozen
    assert int(young_after) > int(young_before)  # young collections are rarer than by default
    assert freed == "True"
    assert once == "True"
