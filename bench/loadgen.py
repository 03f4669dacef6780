"""A Python load generator (aiohttp): fixed concurrency, bounded in time and count, latency and TTFB.

Used when ``wrk`` is absent, and always for time to first byte, which wrk does not report: each
of ``concurrency`` workers sends one request after another until the deadline or the request
budget; the time to the first body byte and to the last are recorded per request.

Run: ``python -m bench.loadgen --url http://127.0.0.1:9100/v1/chat/completions --body-file b.json
--header 'authorization: Bearer x' --concurrency 16 --duration 5`` prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import orjson

LOOPBACK = ("127.", "localhost", "[::1]", "::1")


def percentile(samples: list[float], pct: float) -> float:
    """Nearest-rank percentile of unsorted ``samples`` (0 for none)."""
    if not samples:
        return 0.0
    ordered = sorted(samples)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


@dataclass
class LatencyRecorder:
    """Seconds per request, kept exactly (runs are bounded, so the list stays small)."""

    samples: list[float] = field(default_factory=list)

    def add(self, seconds: float) -> None:
        self.samples.append(seconds)

    def pct(self, p: float) -> float:
        return percentile(self.samples, p)

    def histogram(self, buckets_per_decade: int = 10) -> list[tuple[float, int]]:
        """(upper bound in ms, count) on a log scale: the shape of the distribution, for the JSON."""
        counts: dict[int, int] = {}
        for s in self.samples:
            index = math.ceil(math.log10(max(s * 1000, 1e-3)) * buckets_per_decade)
            counts[index] = counts.get(index, 0) + 1
        return [(round(10 ** (i / buckets_per_decade), 4), counts[i]) for i in sorted(counts)]


@dataclass
class LoadResult:
    requests: int = 0
    errors: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    bytes_received: int = 0
    seconds: float = 0.0
    latency: LatencyRecorder = field(default_factory=LatencyRecorder)
    ttfb: LatencyRecorder = field(default_factory=LatencyRecorder)
    first_error: str = ""

    def summary(self) -> dict:
        ok = self.requests - self.errors
        return {
            "tool": "python",
            "requests": self.requests, "ok": ok, "errors": self.errors,
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "seconds": round(self.seconds, 4),
            "rps": round(ok / self.seconds, 2) if self.seconds else 0.0,
            "bytes": self.bytes_received,
            "p50_ms": round(self.latency.pct(50) * 1000, 3), "p90_ms": round(self.latency.pct(90) * 1000, 3),
            "p99_ms": round(self.latency.pct(99) * 1000, 3),
            "ttfb_p50_ms": round(self.ttfb.pct(50) * 1000, 3), "ttfb_p99_ms": round(self.ttfb.pct(99) * 1000, 3),
            "histogram_ms": self.latency.histogram(),
            "first_error": self.first_error,
        }


def check_loopback(url: str) -> None:
    host = urlsplit(url).hostname or ""
    if not (host.startswith("127.") or host in ("localhost", "::1")):
        raise ValueError(f"load is only sent to loopback addresses, not {host!r}")


async def run_load(url: str, body: bytes, headers: dict[str, str], *, concurrency: int, duration: float,
                   max_requests: int | None = None, method: str = "POST") -> LoadResult:
    """Drive ``url`` with ``concurrency`` workers for ``duration`` seconds (or ``max_requests``)."""
    import aiohttp

    check_loopback(url)
    result = LoadResult()
    budget = [max_requests if max_requests is not None else sys.maxsize]
    connector = aiohttp.TCPConnector(limit=concurrency, force_close=False)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout, auto_decompress=False) as session:
        started = time.perf_counter()
        deadline = started + duration

        async def worker() -> None:
            while time.perf_counter() < deadline and budget[0] > 0:
                budget[0] -= 1
                sent = time.perf_counter()
                try:
                    async with session.request(method, url, data=body, headers=headers) as resp:
                        first = await resp.content.readany()
                        ttfb = time.perf_counter() - sent
                        size = len(first)
                        async for chunk in resp.content.iter_any():
                            size += len(chunk)
                        status = resp.status
                except (TimeoutError, aiohttp.ClientError) as exc:
                    result.requests += 1
                    result.errors += 1
                    result.first_error = result.first_error or f"{type(exc).__name__}: {exc}"
                    continue
                result.requests += 1
                result.statuses[status] = result.statuses.get(status, 0) + 1
                result.bytes_received += size
                if status >= 400:
                    result.errors += 1
                    result.first_error = result.first_error or f"HTTP {status}: {first[:300]!r}"
                    continue
                result.latency.add(time.perf_counter() - sent)
                result.ttfb.add(ttfb)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        result.seconds = time.perf_counter() - started
    return result


def parse_header(text: str) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    if not sep:
        raise argparse.ArgumentTypeError(f"a header is 'name: value', not {text!r}")
    return name.strip(), value.strip()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fixed-concurrency HTTP load on a loopback URL.")
    parser.add_argument("--url", required=True)
    parser.add_argument("--method", default="POST")
    parser.add_argument("--body-file")
    parser.add_argument("--header", action="append", type=parse_header, default=[])
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--max-requests", type=int)
    args = parser.parse_args(argv)
    body = b""
    if args.body_file:
        with open(args.body_file, "rb") as f:
            body = f.read()
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    result = asyncio.run(run_load(args.url, body, dict(args.header), concurrency=args.concurrency,
                                  duration=args.duration, max_requests=args.max_requests, method=args.method))
    sys.stdout.write(orjson.dumps(result.summary()).decode() + "\n")


if __name__ == "__main__":
    main()
