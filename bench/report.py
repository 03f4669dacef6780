"""Turning a run into numbers people read: the table, the JSON file and the PNG chart.

Each cell is the median over the rounds (peak RSS: the highest seen); "added" columns are the
target's median minus the direct path's median in the same run.
"""

from __future__ import annotations

import platform
import time
from pathlib import Path

import orjson

from .runner import Outcome, median
from .scenarios import SCENARIOS
from .targets import TARGETS

MB = 1024 * 1024


def summarize(outcome: Outcome) -> list[dict]:
    rows = []
    for scenario in outcome.options.scenarios:
        direct = None
        for target in outcome.options.targets:
            runs = [m for m in outcome.measurements if m.target == target and m.scenario == scenario]
            if not runs:
                continue
            probes = [m.probe for m in runs if m.probe]
            row = {
                "target": target, "scenario": scenario, "rounds": len(runs),
                "rps": median([m.load["rps"] for m in runs]),
                "p50_ms": median([m.load["p50_ms"] for m in runs]),
                "p99_ms": median([m.load["p99_ms"] for m in runs]),
                "errors": sum(m.load["errors"] for m in runs),
                "requests": sum(m.load["requests"] for m in runs),
                "ttfb_ms": median([p["ttfb_p50_ms"] for p in probes]) if probes else None,
                "cpu_us_per_request": median([m.cpu_us_per_request for m in runs]),
                "rss_idle_mb": outcome.idle_rss.get(target, 0) / MB,
                "rss_peak_mb": max(m.rss_peak for m in runs) / MB,
                "rss_peak_single_mb": (max(m.probe_rss_peak for m in runs if m.probe_rss_peak) / MB
                                       if any(m.probe_rss_peak for m in runs) else None),
                # What one connection's requests add on top of the process as it was just before
                # (memory an earlier concurrent run left in the allocator is not theirs).
                "rss_extra_single_mb": (max(m.probe_rss_peak - m.probe_rss_start for m in runs
                                            if m.probe_rss_peak and m.probe_rss_start) / MB
                                        if any(m.probe_rss_peak and m.probe_rss_start for m in runs) else None),
            }
            if target == "direct":
                direct = row
            row["added_p50_ms"] = diff(row["p50_ms"], direct["p50_ms"] if direct else None)
            row["added_ttfb_ms"] = diff(row["ttfb_ms"], direct["ttfb_ms"] if direct else None)
            rows.append(row)
    return rows


def diff(value: float | None, base: float | None) -> float | None:
    return None if value is None or base is None else value - base


def ratios(rows: list[dict], outcome: Outcome) -> dict:
    """The issue's targets, computed from this run where both sides were measured."""
    def cell(target: str, scenario: str, key: str) -> float | None:
        for row in rows:
            if row["target"] == target and row["scenario"] == scenario:
                return row[key]
        return None

    def ratio(a: float | None, b: float | None) -> float | None:
        return a / b if a is not None and b else None

    frame = outcome.frame_bytes.get("image_4k_stream")
    single_extra = cell("gateway", "image_4k_stream", "rss_extra_single_mb")
    idle = cell("gateway", "image_4k_stream", "rss_idle_mb") or cell("gateway", "chat", "rss_idle_mb")
    return {
        "chat_rps_vs_litellm": ratio(cell("gateway", "chat", "rps"), cell("litellm", "chat", "rps")),
        "chat_rps_vs_raw_floor": ratio(cell("gateway", "chat", "rps"), cell("raw", "chat", "rps")),
        "chat_stream_added_ttfb_ms": cell("gateway", "chat_stream", "added_ttfb_ms"),
        "image_4k_extra_peak_rss_per_frame": (
            ratio(single_extra * MB, frame) if single_extra is not None else None),
        "gateway_idle_rss_mb": idle,
    }


GOALS = {  # (label, goal, higher is better)
    "chat_rps_vs_litellm": ("chat req/s, gateway ÷ LiteLLM", 20.0, True),
    "chat_rps_vs_raw_floor": ("chat req/s, gateway ÷ raw floor", 0.4, True),
    "chat_stream_added_ttfb_ms": ("added TTFB on chat streams, ms", 2.0, False),
    "image_4k_extra_peak_rss_per_frame": ("4K stream: extra peak RSS ÷ frame (1 connection)", 2.0, False),
    "gateway_idle_rss_mb": ("idle gateway worker RSS, MB", 100.0, False),
}


def fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def table(rows: list[dict], outcome: Outcome) -> str:
    head = ["scenario", "target", "req/s", "p50 ms", "p99 ms", "+p50 ms", "TTFB ms", "+TTFB ms",
            "CPU µs/req", "RSS idle MB", "RSS peak MB", "errors"]
    body = [[SCENARIOS[r["scenario"]].label, r["target"], fmt(r["rps"], 0), fmt(r["p50_ms"], 2),
             fmt(r["p99_ms"], 2), fmt(r["added_p50_ms"], 2), fmt(r["ttfb_ms"], 2), fmt(r["added_ttfb_ms"], 2),
             fmt(r["cpu_us_per_request"], 0), fmt(r["rss_idle_mb"], 0), fmt(r["rss_peak_mb"], 0),
             str(r["errors"])] for r in rows]
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True)))
             for line in [head, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    found = ratios(rows, outcome)
    lines.append("")
    for key, (label, goal, higher) in GOALS.items():
        value = found[key]
        verdict = "n/a" if value is None else ("met" if (value >= goal if higher else value <= goal) else "missed")
        lines.append(f"{label}: {fmt(value, 2)} (goal {'≥' if higher else '≤'} {goal:g}: {verdict})")
    for target, scenarios in outcome.unavailable.items():
        for scenario, why in scenarios.items():
            if why != "not offered by this target":
                lines.append(f"not measured: {scenario} on {target}: {why[:200]}")
    for target, why in outcome.failed_targets.items():
        lines.append(f"did not run: {target}: {why.splitlines()[0][:300] if why else ''}")
    return "\n".join(lines)


def write(outcome: Outcome, rows: list[dict]) -> tuple[Path, Path]:
    out = outcome.options.out_dir
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(outcome.started))
    json_path, png_path = out / f"bench-{stamp}.json", out / f"bench-{stamp}.png"
    options = outcome.options
    document = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(outcome.started)),
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "cpus": __import__("os").cpu_count()},
        "options": {"duration": options.duration, "concurrency": options.concurrency, "rounds": options.rounds,
                    "targets": options.targets, "scenarios": options.scenarios, "loadgen": outcome.loadgen,
                    "gateway_env": options.gateway_env},
        "frame_bytes": outcome.frame_bytes,
        "summary": rows,
        "ratios": ratios(rows, outcome),
        "unavailable": outcome.unavailable,
        "failed_targets": outcome.failed_targets,
        "server_logs": outcome.log_tails,
        "runs": [m.__dict__ for m in outcome.measurements],
    }
    json_path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
    chart(rows, png_path)
    return json_path, png_path


def chart(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scenarios = list(dict.fromkeys(r["scenario"] for r in rows))
    targets = [t for t in TARGETS if any(r["target"] == t for r in rows)]
    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    panels = [("rps", "requests/s (log)", True), ("p50_ms", "p50 latency, ms (log)", True),
              ("cpu_us_per_request", "server CPU µs per request (log)", True)]
    width = 0.8 / max(len(targets), 1)
    for ax, (key, title, log_scale) in zip(axes, panels, strict=True):
        for i, target in enumerate(targets):
            values = [next((r[key] or 0 for r in rows if r["target"] == target and r["scenario"] == s), 0)
                      for s in scenarios]
            xs = [j + (i - (len(targets) - 1) / 2) * width for j in range(len(scenarios))]
            ax.bar(xs, values, width, label=TARGETS[target].label)
        ax.set_xticks(range(len(scenarios)), [SCENARIOS[s].label for s in scenarios], rotation=15, fontsize=8)
        ax.set_title(title)
        if log_scale:
            ax.set_yscale("log")
    axes[0].legend(fontsize=8)
    fig.suptitle("Studio gateway benchmark: same fake upstream, same run, 1 worker")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
