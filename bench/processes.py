"""Server processes of a run: start pinned, wait until ready, measure CPU and RSS, always stop.

Each server runs in its own session (process group), so stopping it also stops anything it spawned
(LiteLLM starts a child), and the ``ExitStack`` of the run stops every one of them even when the run
fails half-way.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

LOAD_CORE = 0  # the load generator and the fake upstream
SERVER_CORE = 1  # the server being measured


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pin_prefix(core: int | str) -> list[str]:
    """``taskset -c N`` (or a list such as ``1-3``) where it exists and there are two cores to
    separate; else nothing."""
    if shutil.which("taskset") and (os.cpu_count() or 1) >= 2:
        return ["taskset", "-c", str(core)]
    return []


@dataclass
class Server:
    name: str
    port: int
    process: subprocess.Popen
    log_path: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def tree(self) -> list[psutil.Process]:
        try:
            root = psutil.Process(self.process.pid)
            return [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def cpu_seconds(self) -> float:
        total = 0.0
        for proc in self.tree():
            try:
                times = proc.cpu_times()
                total += times.user + times.system
            except psutil.NoSuchProcess:
                continue
        return total

    def rss_bytes(self) -> int:
        total = 0
        for proc in self.tree():
            try:
                total += proc.memory_info().rss
            except psutil.NoSuchProcess:
                continue
        return total

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def pause(self) -> None:
        """SIGSTOP: an idle server's background loops must not steal the measured server's core."""
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal(signal.SIGCONT)

    def _signal(self, signum: int) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signum)

    def stop(self, grace: float = 10.0) -> None:
        if self.process.poll() is not None:
            return
        self.resume()  # a paused process would not act on SIGTERM
        try:
            os.killpg(self.process.pid, signal.SIGTERM)  # our own process group, started below
            self.process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=grace)
        except ProcessLookupError:
            pass


def start(name: str, command: list[str], *, port: int, workdir: Path, env: dict[str, str] | None = None,
          cwd: Path | None = None, core: int | str = SERVER_CORE, ready_timeout: float = 60.0) -> Server:
    log_path = workdir / f"{name}.log"
    log = log_path.open("wb")
    process = subprocess.Popen(
        [*pin_prefix(core), *command], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})}, cwd=cwd, start_new_session=True,
    )
    log.close()
    server = Server(name=name, port=port, process=process, log_path=log_path)
    try:
        wait_for_port(server, ready_timeout)
    except BaseException:
        server.stop()
        raise
    return server


def wait_for_port(server: Server, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.name} exited ({server.process.returncode}):\n{server.log_tail()}")
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{server.name} did not listen on port {server.port} within {timeout:.0f}s:\n"
                       f"{server.log_tail()}")


@dataclass
class Usage:
    """CPU seconds and peak RSS of one server over one load run."""

    cpu_seconds: float = 0.0
    rss_start: int = 0
    rss_peak: int = 0
    samples: list[int] = field(default_factory=list)


class Monitor:
    """Samples the server's RSS every few milliseconds while the load runs, from a thread."""

    def __init__(self, server: Server, interval: float = 0.02) -> None:
        self.server = server
        self.interval = interval
        self.usage = Usage()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name=f"rss-{server.name}", daemon=True)
        self._cpu_start = 0.0

    def __enter__(self) -> Monitor:
        self.usage.rss_start = self.usage.rss_peak = self.server.rss_bytes()
        self._cpu_start = self.server.cpu_seconds()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.usage.cpu_seconds = self.server.cpu_seconds() - self._cpu_start

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            rss = self.server.rss_bytes()
            self.usage.samples.append(rss)
            self.usage.rss_peak = max(self.usage.rss_peak, rss)
