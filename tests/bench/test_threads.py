"""``bench profile``'s split of the worker's CPU by thread: per call, the event loop first."""

from __future__ import annotations

import os
import threading

from bench import threads


def test_each_thread_spends_what_it_added_per_call_and_the_event_loop_comes_first() -> None:
    before = {100: (2.0, 0.5), 101: (1.0, 0.1), 102: (5.0, 0.0)}
    after = {100: (2.3, 0.53), 101: (1.02, 0.11), 102: (5.0, 0.0), 103: (0.4, 0.1)}  # 103 started since
    rows = threads.split(100, before, after, calls=1000)
    assert [row.thread for row in rows] == ["event loop", "thread 103", "thread 101"]  # 102 did nothing
    loop, new, writer = rows
    assert round(loop.user_us, 6) == 300.0 and round(loop.system_us, 6) == 30.0
    assert round(new.total_us, 6) == 500.0  # counted from nothing
    assert round(writer.user_us, 6) == 20.0 and round(writer.system_us, 6) == 10.0


def test_the_table_gives_each_thread_its_share_of_the_call() -> None:
    rows = [threads.ThreadCpu("event loop", 270.0, 30.0), threads.ThreadCpu("thread 7", 90.0, 10.0)]
    text = threads.table({"chat": rows})
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["scenario", "target", "thread"]
    assert "gateway" in lines[2] and "300.0" in lines[2] and lines[2].endswith("75.0%")
    assert "thread 7" in lines[3] and lines[3].endswith("25.0%")
    assert lines[2].index("event loop") == lines[3].index("thread 7") == lines[0].index("thread")  # names left-aligned
    assert len(lines) == 4  # no raw relay measured: no comparison


def test_the_raw_relays_split_follows_the_gateways_and_sets_their_calls_side_by_side() -> None:
    gateway = {"image": [threads.ThreadCpu("event loop", 1500.0, 500.0), threads.ThreadCpu("thread 7", 900.0, 100.0)],
               "chat": [threads.ThreadCpu("event loop", 250.0, 50.0)]}
    raw = {"image": [threads.ThreadCpu("event loop", 600.0, 400.0)]}  # chat's relay not measured
    lines = threads.table(gateway, raw).splitlines()
    relay = [line for line in lines if "raw relay " in line]
    assert len(relay) == 1 and relay[0].startswith("image") and "1,000.0" in relay[0] and relay[0].endswith("100.0%")
    assert lines.index(relay[0]) == 4  # after the image's two gateway lines, before chat's
    assert lines[-1] == "image: the gateway's event loop 2.00× the raw relay's call, its whole call 3.00×"
    assert not any(line.startswith("chat:") for line in lines)


def test_reads_the_threads_of_a_live_process() -> None:
    done = threading.Event()
    worker = threading.Thread(target=done.wait)
    worker.start()
    try:
        found = threads.read(os.getpid())
    finally:
        done.set()
        worker.join()
    assert os.getpid() in found and len(found) >= 2
    assert sum(user + system for user, system in found.values()) > 0


def test_a_process_that_is_gone_has_no_threads() -> None:
    assert threads.read(2**22 + 12345) == {}
