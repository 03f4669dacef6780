"""The C allocator tuned for a process that relays 10-20 MB image frames.

glibc's malloc serves a large block with a fresh ``mmap`` and returns it to the system when it
is freed; the next 4K frame then touches 15 MB of new pages again (page faults and zeroing),
which cost more CPU than copying the frame. Serving blocks below 32 MB from the
heap and keeping up to ``keep`` bytes of freed heap lets the next frame reuse memory that is
already mapped. So that a process does not sit on that memory when the burst is over,
``release_when_idle`` gives it back (``malloc_trim``) once no request has been in flight for a
moment. "In flight", not "ended": under a load of 4K streams whose ends bunch up (each waits for
the recorder), a pause of a few hundred milliseconds between two ends is common, and memory
given back there is faulted in again by the next frames while the load goes on.
Elsewhere than glibc this does nothing.

How much, and for how long (``STUDIO_MALLOC_KEEP_BYTES``, ``STUDIO_MALLOC_IDLE_SECONDS``): 16
concurrent 4K streams work in about 450 MB. Kept only up to 256 MB, glibc gave the top of the
heap back whenever a wave of frames ended together, and the next wave faulted it in again:
30,000-60,000 page faults every half second under that load, each a fresh page to zero. Given
back after 0.2 s without a request, it was faulted in again by a burst that followed a short
pause. Keeping up to 1 GiB, and giving it back after a second without a request, cut the CPU of
a 4K stream under that load by about 5% (80.4 -> 76.9 ms per request, medians of three
interleaved runs), and the process still goes back to its idle size a second or two after its
last request.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import logging
from collections.abc import Callable

logger = logging.getLogger(__name__)

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_MAX = 32 * 1024 * 1024  # glibc's ceiling for the threshold on 64-bit systems


_active = False  # a request ended since the idle watcher last looked
_in_flight = 0  # requests started and not yet ended


def _libc_function(name: str) -> Callable[..., int] | None:
    try:
        return getattr(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6"), name)
    except (OSError, AttributeError):
        return None


def keep_freed_memory(keep: int) -> bool:
    """Tune malloc as above; False where there is no glibc ``mallopt`` (or ``keep`` is 0)."""
    if keep <= 0:
        return False
    mallopt = _libc_function("mallopt")
    if mallopt is None:
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    done = bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX)) and bool(
        mallopt(M_TRIM_THRESHOLD, min(keep, 2**31 - 1)))
    if not done:
        logger.warning("could not tune the C allocator (mallopt refused)")
    return done


def request_started() -> None:
    """A request has begun (plain stores: they sit on every request's path)."""
    global _in_flight
    _in_flight += 1


def request_ended() -> None:
    global _active, _in_flight
    _in_flight -= 1
    _active = True


async def release_when_idle(interval: float = 0.2) -> None:
    """Give kept memory back once no request has been in flight for ``interval`` to ``2 * interval`` s."""
    global _active
    trim = _libc_function("malloc_trim")
    if trim is None:
        return
    trim.argtypes = [ctypes.c_size_t]
    since_trim = False  # requests ended since the last trim
    while True:
        await asyncio.sleep(interval)
        if _active or _in_flight:
            _active, since_trim = False, True
        elif since_trim:
            since_trim = False
            trim(0)


# A /v1 request allocates a few thousand container objects, nearly all freed by reference
# counting; at CPython's default (a young collection every 700 net allocations) several young
# collections ran per request, and every few hundred requests a full one walked the whole heap.
YOUNG_THRESHOLD = 10_000
_settled = False


def settle_heap() -> None:
    """Once the server has started: move everything alive now (modules, settings, the snapshot,
    the connection pools) out of the collector's sight (``gc.freeze``), so that the collections
    the requests cause walk only what the requests made, and collect the young generation less
    often. Cycles are still found; what was frozen is never freed, as it lives as long as the
    process anyway."""
    global _settled
    if _settled:  # once per process: a later start (a second server in one process) changes nothing
        return
    _settled = True
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
