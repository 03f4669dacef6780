"""Fixtures of the fault and fuzz suite, and its closing counts."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

from tests.fault import tally
from tests.fault.vendor import FaultyVendor, Reply, chat_reply, closed_port

FAMILY_PREFIXES = (("/v1/models/", "native"), ("/v1/messages", "messages"), ("/v1/alpha/", "ark"),
                   ("/v1/beta/", "dashscope"))


def family_of(path: str) -> str:
    for prefix, family in FAMILY_PREFIXES:
        if path.startswith(prefix) and (family != "native" or ":" in path):
            return family
    return "openai"


def is_family_error(family: str, body: object) -> bool:
    """Whether ``body`` is an error body of ``family`` (spec: each family's own error shape)."""
    if not isinstance(body, dict):
        return False
    error = body.get("error")
    if family == "native":
        return isinstance(error, dict) and isinstance(error.get("code"), int) and isinstance(error.get("message"), str) \
            and isinstance(error.get("status"), str)
    if family == "messages":
        return body.get("type") == "error" and isinstance(error, dict) and isinstance(error.get("type"), str) \
            and isinstance(error.get("message"), str)
    if family == "dashscope":
        return isinstance(body.get("code"), str) and isinstance(body.get("message"), str) and "request_id" in body
    if family == "ark":
        return isinstance(error, dict) and all(isinstance(error.get(k), str) for k in ("code", "message", "type"))
    return isinstance(error, dict) and isinstance(error.get("message"), str) and "type" in error and "code" in error


class Listener:
    """A loopback HTTP server that counts every request it sees (it must see none)."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        hits = self.hits

        class Handler(http.server.BaseHTTPRequestHandler):
            def _hit(self) -> None:
                hits.append(f"{self.command} {self.path}")
                self.send_response(302 if self.path.startswith("/redirect") else 200)
                self.send_header("Location", "http://127.0.0.1/")
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_HEAD = _hit

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_port
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()
    tally.add("listener hits", len(server.hits))


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if tally.counts:
        terminalreporter.section("fault and fuzz suite counts")
        for line in tally.summary():
            terminalreporter.write_line(line)


@pytest.fixture
def faulty_upstream(catalog, settings):
    """A factory of upstream rows pointing at a ``FaultyVendor`` (short deadlines for every family):
    ``make(protocol, path, model_map, reply)`` returns ``(vendor, row)``; the row outranks the sandbox."""
    from studio.gateway import snapshot
    from studio.models import Upstream

    short = {"connect": 1.0, "first_byte": 0.5, "total": 3.0}
    settings.STUDIO_UPSTREAM_DEADLINES = {family: short for family in settings.STUDIO_UPSTREAM_DEADLINES}
    vendors: list[FaultyVendor] = []

    def make(protocol: str, path: str, model_map: dict[str, str], reply: Reply = chat_reply):
        vendor = FaultyVendor(reply)
        vendors.append(vendor)
        row = Upstream(name=f"Faulty {protocol} {len(vendors)}", protocol=protocol, base_url=vendor.url(path),
                       priority=1000, model_map=model_map)
        row.credential = "sk-faulty"
        row.save()
        snapshot.invalidate()
        return vendor, row

    yield make
    for vendor in vendors:
        vendor.close()


async def use_mode(row, vendor: FaultyVendor, mode: str, path: str) -> None:
    """Put ``vendor`` in ``mode`` (``refuse``: point ``row`` at a closed port) and forget breaker state."""
    from studio.gateway import routing, snapshot

    vendor.mode = mode
    base = f"http://127.0.0.1:{closed_port()}{path}" if mode == "refuse" else vendor.url(path)
    if row.base_url != base:
        row.base_url = base
        await row.asave()
        snapshot.invalidate()
    routing.reset_health()
