"""``python -m bench soak``: is the gateway's memory flat over many requests?

The fake vendor and the gateway start as in ``bench run`` (one uvicorn worker on its own core,
``STUDIO_INPROCESS_WORKER=0``). After a warm-up the gateway's RSS (its whole process tree) is the
baseline; then the requests go in ``samples`` chunks of an exact count (the Python load generator's
request budget) and the RSS is read after each chunk. The issue's target is "memory flat (±10%)
over 100,000 requests": the final RSS within ±10% of the baseline. Every process is stopped on any
exit, Ctrl+C included; load goes to loopback only, and the whole soak is bounded by ``max_seconds``.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.machine import machine
from bench.targets import GatewayOptions
from bench.workdir import describe_workdir, make_workdir

MB = 1024 * 1024
SETTLE_SECONDS = 0.2  # between the end of a chunk and the RSS reading, the same for every sample


@dataclass
class Options(GatewayOptions):
    requests: int = 100_000
    scenario: str = "chat"
    samples: int = 20
    warmup: int = 2_000
    tolerance_pct: float = 10.0
    max_seconds: float = 1800.0  # the whole load, warm-up included; a chunk cut short ends the soak


def chunk_sizes(total: int, samples: int) -> list[int]:
    """``total`` split into ``samples`` near-equal chunks (earlier chunks take the remainder)."""
    samples = max(1, min(samples, total))
    base, extra = divmod(total, samples)
    return [base + (1 if i < extra else 0) for i in range(samples)]


def drift_pct(rss: int, baseline: int) -> float:
    return (rss - baseline) / baseline * 100 if baseline else 0.0


def slope_mb_per_100k(points: list[tuple[int, int]]) -> float | None:
    """Least-squares growth of RSS over (requests done, RSS bytes): a leak shows as a steady slope."""
    if len(points) < 2:
        return None
    xs, ys = [p[0] for p in points], [p[1] / MB for p in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var * 100_000 if var else None


def verdict(baseline: int, samples: list[dict], *, tolerance_pct: float, requested: int) -> dict:
    """Final RSS within ±tolerance of the post-warm-up RSS: "met", else "missed"; also the max."""
    if not samples or not baseline:
        return {"verdict": "n/a", "reason": "no samples"}
    final = samples[-1]
    peak = max(samples, key=lambda s: s["rss_bytes"])
    in_load_peak = max([s.get("chunk_peak_bytes") or 0 for s in samples] + [peak["rss_bytes"]])
    final_drift = drift_pct(final["rss_bytes"], baseline)
    done = final["requests"]
    result = {
        "baseline_mb": baseline / MB, "final_mb": final["rss_bytes"] / MB,
        "max_mb": peak["rss_bytes"] / MB, "max_at_requests": peak["requests"],
        "max_drift_pct": drift_pct(peak["rss_bytes"], baseline), "final_drift_pct": final_drift,
        "in_load_peak_mb": in_load_peak / MB, "in_load_peak_drift_pct": drift_pct(in_load_peak, baseline),
        "slope_mb_per_100k": slope_mb_per_100k([(0, baseline)] + [(s["requests"], s["rss_bytes"]) for s in samples]),
        "requests_done": done, "requests_requested": requested, "tolerance_pct": tolerance_pct,
        "verdict": "met" if abs(final_drift) <= tolerance_pct else "missed",
    }
    if done < requested:
        result["verdict"] += " (incomplete)"
    return result


def log(message: str) -> None:
    import sys

    print(f"[soak {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run(options: Options) -> dict:
    """Start the fake vendor and the gateway, warm up, soak in chunks; always stop both."""
    from bench import runner
    from bench.processes import Monitor
    from bench.scenarios import SCENARIOS
    from bench.targets import TARGETS

    scenario = SCENARIOS[options.scenario]
    started = time.time()
    deadline = time.monotonic() + options.max_seconds
    doc: dict = {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)), "started_epoch": started,
                 "machine": machine(),
                 "options": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(options).items()},
                 "loadgen": "python", "samples": [], "chunks": [], "errors": 0}
    workdir = make_workdir("studio-soak-", options.workdir)
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, workdir, True)
        doc["workdir"] = describe_workdir(workdir)
        upstream = runner.start_upstream(workdir)
        stack.callback(upstream.stop)
        ctx = options.context(workdir, upstream.base_url)
        log("starting the gateway")
        gateway = TARGETS["gateway"].start(ctx, upstream)
        stack.callback(gateway.server.stop)
        request = runner.checked_request(gateway, scenario, what="the gateway")
        body_file = workdir / "body.json"
        body_file.write_bytes(request.body)
        url = gateway.server.base_url + request.path

        def load(count: int) -> dict:
            remaining = deadline - time.monotonic()
            if remaining <= 1:
                raise TimeoutError("the soak's time budget is spent")
            return runner.python_load(url, body_file, request.headers, concurrency=options.concurrency,
                                      duration=remaining, max_requests=count)

        log(f"warm-up: {options.warmup:,} requests")
        warm = load(options.warmup) if options.warmup else {"errors": 0}
        doc["warmup"] = warm
        time.sleep(SETTLE_SECONDS)
        baseline = doc["baseline_rss_bytes"] = gateway.server.rss_bytes()
        log(f"baseline RSS {baseline / MB:.1f} MB")
        done = 0
        try:
            for size in chunk_sizes(options.requests, options.samples):
                with Monitor(gateway.server, interval=0.05) as watch:
                    result = load(size)
                time.sleep(SETTLE_SECONDS)
                rss = gateway.server.rss_bytes()
                done += result["requests"]
                doc["errors"] += result["errors"]
                doc["chunks"].append({k: v for k, v in result.items() if k != "histogram_ms"})
                doc["samples"].append({"requests": done, "rss_bytes": rss, "drift_pct": drift_pct(rss, baseline),
                                       "chunk_peak_bytes": watch.usage.rss_peak, "rps": result["rps"],
                                       "errors": result["errors"], "p50_ms": result["p50_ms"],
                                       "p99_ms": result["p99_ms"]})
                log(f"{done:>9,} requests  RSS {rss / MB:7.1f} MB  drift {drift_pct(rss, baseline):+6.1f}%  "
                    f"{result['rps']:,.0f} req/s  errors {result['errors']}")
                if result["requests"] < size:
                    log("the time budget ran out: the soak ends early")
                    break
                if result["ok"] == 0:
                    log(f"every request failed ({result['first_error'][:200]}): the soak ends early")
                    break
        except TimeoutError as exc:
            log(str(exc))
        ok = sum(c["ok"] for c in doc["chunks"])
        seconds = sum(c["seconds"] for c in doc["chunks"])
        doc["rps"] = ok / seconds if seconds else 0.0
        doc["load_seconds"] = seconds
        doc["wall_seconds"] = time.time() - started
        doc["server_log"] = gateway.server.log_tail()
    doc["result"] = verdict(doc["baseline_rss_bytes"], doc["samples"], tolerance_pct=options.tolerance_pct,
                            requested=options.requests)
    return doc


def table(doc: dict) -> str:
    baseline = doc["baseline_rss_bytes"]
    rows = [("after warm-up", f"{baseline / MB:.1f}", "+0.0", "", "")]
    rows += [(f"{s['requests']:,}", f"{s['rss_bytes'] / MB:.1f}", f"{s['drift_pct']:+.1f}",
              f"{s['rps']:,.0f}", str(s["errors"])) for s in doc["samples"]]
    head = ("requests", "RSS MB", "drift %", "req/s", "errors")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in [head, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    r = doc["result"]
    if r["verdict"] == "n/a":
        return "\n".join([*lines, "", "verdict: n/a (no samples)"])
    slope = "-" if r["slope_mb_per_100k"] is None else f"{r['slope_mb_per_100k']:+.1f}"
    lines += [
        "",
        f"start {r['baseline_mb']:.1f} MB, end {r['final_mb']:.1f} MB ({r['final_drift_pct']:+.1f}%), "
        f"max {r['max_mb']:.1f} MB ({r['max_drift_pct']:+.1f}% at {r['max_at_requests']:,}), "
        f"peak under load {r['in_load_peak_mb']:.1f} MB ({r['in_load_peak_drift_pct']:+.1f}%)",
        f"trend {slope} MB per 100k requests; {doc['rps']:,.0f} req/s over {doc['load_seconds']:.0f} s of load; "
        f"errors {doc['errors']}",
        f"memory flat (±{r['tolerance_pct']:g}%) over {r['requests_requested']:,} requests: {r['verdict']} "
        f"(final drift {r['final_drift_pct']:+.1f}%, {r['requests_done']:,} done)",
    ]
    return "\n".join(lines)


def write(doc: dict, out_dir: Path) -> tuple[Path, Path | None]:
    import orjson

    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(doc["started_epoch"]))
    json_path, png_path = out_dir / f"soak-{stamp}.json", out_dir / f"soak-{stamp}.png"
    json_path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    try:
        chart(doc, png_path)
    except ImportError:
        return json_path, None
    return json_path, png_path


def chart(doc: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    baseline = doc["baseline_rss_bytes"] / MB
    tolerance = doc["result"].get("tolerance_pct", 10.0)
    xs = [0] + [s["requests"] for s in doc["samples"]]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    ax.plot(xs, [baseline] + [s["rss_bytes"] / MB for s in doc["samples"]], marker="o", label="RSS after chunk")
    ax.plot(xs[1:], [s["chunk_peak_bytes"] / MB for s in doc["samples"]], linestyle=":", label="peak during chunk")
    ax.axhspan(baseline * (1 - tolerance / 100), baseline * (1 + tolerance / 100), alpha=0.12, color="green",
               label=f"±{tolerance:g}% of post-warm-up RSS")
    ax.set_xlabel("requests after warm-up")
    ax.set_ylabel("gateway RSS, MB")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    options = doc["options"]
    ax.set_title(f"Gateway memory soak: {options['scenario']}, concurrency {options['concurrency']}, "
                 f"verdict {doc['result']['verdict']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
