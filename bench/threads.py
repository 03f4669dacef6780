"""A server worker's CPU by thread over a stretch of load, per call: which thread spends it.

py-spy's samples (``bench profile``, ``--gil``) show the thread that holds the interpreter; what a
thread does with it released (SQLite's writes, a file's, a picture's hash) is missing from them.
The kernel counts every thread's user and system time whatever it runs (``psutil``'s
``Process.threads``), so the split by thread has all of it. The process's main thread is the event
loop's; the others are the thread pools' (the recorder's writes, ``sync_to_async``). A thread that
ended during the stretch is missing from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import psutil

from bench.report import grid

Times = dict[int, tuple[float, float]]  # thread id → (user, system) seconds so far
SHOWN_US = 0.05  # a thread that spent less a call is left out of the split


@dataclass(frozen=True, slots=True)
class ThreadCpu:
    thread: str  # "event loop" (the main thread) or "thread <id>"
    user_us: float  # per call
    system_us: float

    @property
    def total_us(self) -> float:
        return self.user_us + self.system_us


def read(pid: int) -> Times:
    """Each thread's CPU so far (nothing when the process is gone)."""
    try:
        return {t.id: (t.user_time, t.system_time) for t in psutil.Process(pid).threads()}
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return {}


def split(pid: int, before: Times, after: Times, calls: int) -> list[ThreadCpu]:
    """What each thread spent between the two readings, per call: the event loop's first, then the
    others, the most first (a thread started since counts from nothing)."""
    rows = []
    for tid, (user, system) in after.items():
        user0, system0 = before.get(tid, (0.0, 0.0))
        row = ThreadCpu("event loop" if tid == pid else f"thread {tid}",
                        (user - user0) * 1e6 / max(calls, 1), (system - system0) * 1e6 / max(calls, 1))
        if row.total_us >= SHOWN_US:
            rows.append(row)
    return sorted(rows, key=lambda row: (row.thread != "event loop", -row.total_us))


def whole_us(rows: list[ThreadCpu]) -> float:
    return sum(row.total_us for row in rows)


def event_loop_us(rows: list[ThreadCpu]) -> float:
    return sum(row.total_us for row in rows if row.thread == "event loop")


def table(split_by_scenario: dict[str, list[ThreadCpu]], raw: dict[str, list[ThreadCpu]] | None = None) -> str:
    """One line per scenario, target and thread: µs a call in user and system time, and the
    thread's share of its target's call. With ``raw`` (the raw relay's split under the same load),
    each scenario's lines end with the relay's, and the gateway's event loop and whole call are
    given as multiples of the relay's whole call: what the gateway's own thread costs against
    what it spends in threads the relay has no counterpart for (the recorder's writes)."""
    raw = raw or {}
    body = []
    for scenario, rows in split_by_scenario.items():
        for target, found in (("gateway", rows), ("raw relay", raw.get(scenario))):
            if found is None:
                continue
            whole = whole_us(found) or 1.0
            body += [[scenario, target, row.thread, f"{row.user_us:,.1f}", f"{row.system_us:,.1f}",
                      f"{row.total_us:,.1f}", f"{100 * row.total_us / whole:.1f}%"] for row in found]
    text = grid(["scenario", "target", "thread", "user µs/call", "system µs/call", "µs/call", "share"], body,
                left=3)
    lines = [f"{scenario}: the gateway's event loop {event_loop_us(rows) / relay:.2f}× the raw relay's call, "
             f"its whole call {whole_us(rows) / relay:.2f}×"
             for scenario, rows in split_by_scenario.items()
             if (relay := whole_us(raw.get(scenario) or []))]
    return "\n".join([text, *lines])
