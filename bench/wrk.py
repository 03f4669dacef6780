"""Running ``wrk`` with a POST body and headers, and reading its results as JSON.

wrk takes its request from a Lua script; ``done()`` prints one machine-readable line so nothing
depends on wrk's human-oriented text output.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import orjson

RESULT_PREFIX = "BENCH_WRK "

DONE_FUNCTION = r"""
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '%s{"requests":%d,"duration_us":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,' ..
    '"timeout":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f}\n',
    RESULT_PREFIX, summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write,
    e.status, e.timeout, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.max, latency.mean))
end
"""


def available() -> bool:
    return shutil.which("wrk") is not None


def lua_string(value: str) -> str:
    """A Lua long-bracket literal that cannot be closed by the value itself."""
    level = 0
    while f"]{'=' * level}]" in value:
        level += 1
    eq = "=" * level
    return f"[{eq}[{value}]{eq}]"


def script(method: str, body: bytes, headers: dict[str, str]) -> str:
    lines = [f"RESULT_PREFIX = {lua_string(RESULT_PREFIX)}", f"wrk.method = {lua_string(method)}",
             f"wrk.body = {lua_string(body.decode())}"]
    lines += [f"wrk.headers[ {lua_string(k)} ] = {lua_string(v)}" for k, v in headers.items()]
    return "\n".join(lines) + "\n" + DONE_FUNCTION


def parse_output(output: str) -> dict:
    """The ``done()`` line as a summary shaped like the Python generator's."""
    for line in output.splitlines():
        if line.startswith(RESULT_PREFIX):
            raw = orjson.loads(line[len(RESULT_PREFIX):])
            break
    else:
        raise RuntimeError(f"wrk printed no result line:\n{output[-2000:]}")
    seconds = raw["duration_us"] / 1e6
    socket_errors = raw["connect"] + raw["read"] + raw["write"] + raw["timeout"]
    # wrk counts a non-2xx/3xx answer in ``requests`` and in ``status``.
    ok = max(raw["requests"] - raw["status"], 0)
    return {
        "tool": "wrk",
        "requests": raw["requests"], "ok": ok, "errors": raw["status"] + socket_errors,
        "status_errors": raw["status"], "socket_errors": socket_errors,
        "seconds": round(seconds, 4), "rps": round(ok / seconds, 2) if seconds else 0.0,
        "bytes": raw["bytes"],
        "p50_ms": raw["p50_us"] / 1000, "p90_ms": raw["p90_us"] / 1000, "p99_ms": raw["p99_us"] / 1000,
        "max_ms": raw["max_us"] / 1000, "mean_ms": round(raw["mean_us"] / 1000, 4),
    }


def run(url: str, body: bytes, headers: dict[str, str], *, concurrency: int, duration: float,
        workdir: Path, pin: list[str], method: str = "POST") -> dict:
    """One wrk run, bounded by ``duration`` (and a hard timeout on top)."""
    lua = workdir / "request.lua"
    lua.write_text(script(method, body, headers))
    seconds = max(1, round(duration))
    command = [*pin, "wrk", "-t1", f"-c{concurrency}", f"-d{seconds}s", "--timeout", "60s", "-s", str(lua), url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 90, check=False)
    if done.returncode != 0 or RESULT_PREFIX not in done.stdout:
        # A Lua error leaves wrk running with its default request and exit code 0: fail loudly.
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stderr[-1000:]}{done.stdout[-1000:]}")
    return parse_output(done.stdout)
