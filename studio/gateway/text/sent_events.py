"""How many events a stream has sent its client, for the numbers of the events that end it after
a failure (``response.failed`` is numbered on from them).

Counting the blank lines of every piece as it went cost about 1 ns a byte (6.6 µs for a whole
responses stream of 6 KB), for a number that only a stream broken midway reads. The pieces are
kept instead, and counted when the number is asked for, or once they hold ``HELD_BYTES`` (then
let go), so a long stream holds no more than that of what it has sent.
"""

from __future__ import annotations

HELD_BYTES = 64 * 1024


class SentEvents:
    __slots__ = ("counted", "held", "size")

    def __init__(self) -> None:
        self.counted = 0  # the events of the pieces counted and let go
        self.held: list[bytes] = []  # pieces sent since, each of whole events (each ended by a blank line)
        self.size = 0

    def add(self, piece: bytes) -> None:
        self.held.append(piece)
        self.size += len(piece)
        if self.size > HELD_BYTES:
            self.counted = self.count()
            self.held, self.size = [], 0

    def count(self) -> int:
        return self.counted + sum(piece.count(b"\n\n") for piece in self.held)
