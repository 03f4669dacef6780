"""Servers of a run start pinned where possible, are measured, and are stopped with all they spawned."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

psutil = pytest.importorskip("psutil", reason="bench requirements (bench/requirements.txt) not installed")

from bench import processes  # noqa: E402
from bench.runner import send_once  # noqa: E402
from bench.scenarios import SCENARIOS, Dialect  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def wait_for_status(pid: int, status: str, timeout: float = 5.0) -> bool:
    """Signals are delivered asynchronously: the state changes a moment after ``kill`` returns."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if psutil.Process(pid).status() == status:
            return True
        time.sleep(0.01)
    return False


def test_fake_upstream_process_answers_is_measured_and_stops(tmp_path: Path) -> None:
    port = processes.free_port()
    server = processes.start("upstream", [sys.executable, "-m", "bench.fake_upstream", "--port", str(port), "--small"],
                             port=port, workdir=tmp_path, cwd=REPO, core=processes.LOAD_CORE, ready_timeout=120)
    try:
        request = Dialect("gpt-4o-mini", None, "/v1beta", "x-goog-api-key", "k").request(SCENARIOS["chat"])
        with processes.Monitor(server) as watch:
            status, body = send_once(server, request)
        assert status == 200 and b'"chat.completion"' in body
        assert watch.usage.rss_peak > 5 * 1024 * 1024
        assert server.cpu_seconds() > 0
        server.pause()  # while another target is measured
        assert wait_for_status(server.process.pid, psutil.STATUS_STOPPED)
        server.resume()
        assert send_once(server, request)[0] == 200
    finally:
        server.stop()
    assert server.process.poll() is not None
    assert not psutil.pid_exists(server.process.pid) or psutil.Process(server.process.pid).status() == "zombie"


def test_a_mode_warms_a_server_with_checked_answers_and_stops_at_a_wrong_one(tmp_path: Path) -> None:
    from bench.runner import checked_request
    from bench.targets import Running, vendor_dialect

    port = processes.free_port()
    server = processes.start("upstream", [sys.executable, "-m", "bench.fake_upstream", "--port", str(port), "--small"],
                             port=port, workdir=tmp_path, cwd=REPO, core=processes.LOAD_CORE, ready_timeout=120)
    try:
        target = Running(server, vendor_dialect("k"))
        request = checked_request(target, SCENARIOS["chat"], 3)
        assert request == target.dialect.request(SCENARIOS["chat"])
        # The small fake's picture is no 4K frame: not what the scenario measures, so the run stops.
        with pytest.raises(RuntimeError, match=r"^the vendor, 4K frame 15 MB, streamed: HTTP 200"):
            checked_request(target, SCENARIOS["image_4k_stream"], what="the vendor")
    finally:
        server.stop()
