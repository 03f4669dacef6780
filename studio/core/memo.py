"""A bounded memo: ``memo[key]`` is ``make(key)``, worked out once a key.

For values a request works out from a few names that repeat (header names, stream event names,
what to do with an event of a name): a hit is a plain dict look-up, a miss calls ``make`` and keeps
the value while fewer than ``kept`` are kept (past that, each new key is worked out every time, so
names a client or vendor makes up cannot grow the process's memory).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Memo(dict[K, V]):
    def __init__(self, make: Callable[[K], V], kept: int = 256) -> None:
        super().__init__()
        self.make = make
        self.kept = kept

    def __missing__(self, key: K) -> V:
        value = self.make(key)
        if len(self) < self.kept:
            self[key] = value
        return value
