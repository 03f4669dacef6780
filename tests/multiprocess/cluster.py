"""Separate server processes for the multi-process tests: two web processes and a worker, started
with the commands a container runs, sharing one PostgreSQL database, Redis and an S3 bucket."""

from __future__ import annotations

import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Proc:
    name: str
    command: list[str]
    env: dict[str, str]
    log: Path
    process: subprocess.Popen | None = None

    def start(self) -> None:
        handle = self.log.open("ab")
        self.process = subprocess.Popen(self.command, cwd=ROOT, env=self.env, stdout=handle,
                                        stderr=subprocess.STDOUT, start_new_session=True)

    def kill_hard(self) -> None:
        """``kill -9``: no shutdown code runs."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""


def wait_http(url: str, proc: Proc, timeout: float = 60.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.process is not None and proc.process.poll() is not None:
            raise RuntimeError(f"{proc.name} exited:\n{proc.tail()}")
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError(f"{proc.name} did not answer at {url}:\n{proc.tail()}")


@dataclass
class Cluster:
    env: dict[str, str]
    folder: Path
    web1_port: int = field(default_factory=free_port)
    web2_port: int = field(default_factory=free_port)
    procs: dict[str, Proc] = field(default_factory=dict)

    @property
    def web1(self) -> str:
        return f"http://127.0.0.1:{self.web1_port}"

    @property
    def web2(self) -> str:
        return f"http://127.0.0.1:{self.web2_port}"

    def start(self) -> None:
        python = sys.executable
        web1_env = {**self.env, "PORT": str(self.web1_port), "PUBLIC_BASE_URL": self.web1}
        web2_env = {**self.env, "PORT": str(self.web2_port), "PUBLIC_BASE_URL": self.web2}
        self.procs = {
            "web1": Proc("web1", [python, "manage.py", "serve", "--port", str(self.web1_port)], web1_env,
                         self.folder / "web1.log"),
            "web2": Proc("web2", [python, "-m", "uvicorn", "studio.asgi:application", "--host", "127.0.0.1",
                                  "--port", str(self.web2_port), "--lifespan", "on", "--no-server-header"],
                         web2_env,
                         self.folder / "web2.log"),
            "worker": Proc("worker", [python, "manage.py", "run_worker"], {**self.env, "PUBLIC_BASE_URL": self.web1},
                           self.folder / "worker.log"),
        }
        for proc in self.procs.values():
            proc.start()
        wait_http(self.web1 + "/login/", self.procs["web1"])
        wait_http(self.web2 + "/login/", self.procs["web2"])

    def restart_worker(self) -> None:
        self.procs["worker"].start()

    def stop(self) -> None:
        for proc in self.procs.values():
            proc.stop()


class Listener:
    """A loopback webhook receiver that counts every delivery it acknowledges."""

    def __init__(self) -> None:
        received: list[dict] = []
        self.received = received

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                received.append({"delivery": self.headers.get("X-Studio-Delivery"),
                                 "task": self.headers.get("X-Studio-Task-Id"),
                                 "status": self.headers.get("X-Studio-Task-Status"), "body": json.loads(body)})
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"

    def counts(self) -> Counter:
        return Counter(item["delivery"] for item in self.received)

    def close(self) -> None:
        self.server.shutdown()
