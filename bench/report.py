"""Turning a run into numbers people read: the table, the JSON file and the PNG chart.

Each cell is the median over the rounds (peak RSS: the highest seen); "added" columns are the
target's median minus the direct path's median in the same run. A ratio of two targets' CPU per
request (÷ raw, production's extra, LiteLLM ÷ gateway) is the median over the rounds of the ratio
within each round, where the two ran one right after the other: the machine's speed drifts from
minute to minute (the same server's CPU per request has read 730 and 1,180 µs three minutes
apart), and a round one target spent in a slow spell moves a ratio of medians but not the
median of the rounds' own ratios. ``ratios_of_medians`` in the JSON keeps the other reading.
"""

from __future__ import annotations

import time
from pathlib import Path

import orjson

from bench.machine import machine
from bench.runner import FOUR_STREAMS, Outcome, median
from bench.scenarios import SCENARIOS
from bench.targets import TARGETS
from bench.workdir import workdir_line

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
                "rss_extra_four_mb": (max(m.four_rss_peak - m.four_rss_start for m in runs
                                          if m.four_rss_peak and m.four_rss_start) / MB
                                      if any(m.four_rss_peak and m.four_rss_start for m in runs) else None),
            }
            if target == "direct":
                direct = row
            row["added_p50_ms"] = diff(row["p50_ms"], direct["p50_ms"] if direct else None)
            row["added_p99_ms"] = diff(row["p99_ms"], direct["p99_ms"] if direct else None)
            row["added_ttfb_ms"] = diff(row["ttfb_ms"], direct["ttfb_ms"] if direct else None)
            rows.append(row)
    cpu_vs_raw(rows, outcome)
    return rows


def diff(value: float | None, base: float | None) -> float | None:
    return None if value is None or base is None else value - base


def cell(rows: list[dict], target: str, scenario: str, key: str) -> float | None:
    for row in rows:
        if row["target"] == target and row["scenario"] == scenario:
            return row[key]
    return None


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def paired(outcome: Outcome, target: str, base: str, scenario: str) -> float | None:
    """``target``'s CPU per request ÷ ``base``'s on ``scenario``: the median over the rounds that
    measured both of the ratio within the round."""
    rounds: dict[int, dict[str, float]] = {}
    for m in outcome.measurements:
        if m.scenario == scenario and m.target in (target, base):
            rounds.setdefault(m.round, {})[m.target] = m.cpu_us_per_request
    return median([ratio(found.get(target), found.get(base)) for found in rounds.values()])


def cpu_vs_raw(rows: list[dict], outcome: Outcome) -> None:
    """Each row's CPU per request ÷ the raw relay's on the same scenario (the headline ratio)."""
    for row in rows:
        row["cpu_vs_raw"] = paired(outcome, row["target"], "raw", row["scenario"])


# The goals: (key, label, goal, higher is better). Ratios are taken within one run.
CPU_SCENARIOS = ("chat", "chat_stream", "messages_stream", "responses_stream", "image", "image_4k_stream")
TEXT_SCENARIOS = tuple(s for s in CPU_SCENARIOS if SCENARIOS[s].family != "image")
GOALS: list[tuple[str, str, float, bool]] = [
    *[(f"cpu_vs_raw:{s}", f"CPU/req gateway ÷ raw relay, {SCENARIOS[s].label}", 2.5, False) for s in CPU_SCENARIOS],
    *[(f"litellm_cpu_vs_gateway:{s}", f"CPU/req LiteLLM ÷ gateway, {SCENARIOS[s].label}", 20.0, True)
      for s in TEXT_SCENARIOS],
    *[(f"production_overhead_pct:{s}", f"production features on: extra CPU/req %, {SCENARIOS[s].label}", 5.0, False)
      for s in CPU_SCENARIOS],
    ("gateway_idle_rss_mb", "idle gateway worker RSS, MB", 100.0, False),
    ("image_4k_extra_peak_rss_per_frame", "4K stream: extra peak RSS ÷ frame (1 connection)", 2.0, False),
    ("image_4k_four_extra_peak_rss_per_frame",
     f"4K streams: extra peak RSS ÷ frames in flight ({FOUR_STREAMS} connections)", 2.0, False),
    ("chat_stream_added_ttfb_ms", "added TTFB on chat streams, ms (quiet machine)", 1.0, False),
]


def ratios(rows: list[dict], outcome: Outcome) -> dict:
    """The issue's targets, computed from this run where both sides were measured."""
    def get(target: str, scenario: str, key: str) -> float | None:
        return cell(rows, target, scenario, key)

    found: dict[str, float | None] = {}
    for s in CPU_SCENARIOS:
        found[f"cpu_vs_raw:{s}"] = paired(outcome, "gateway", "raw", s)
        found[f"production_cpu_vs_raw:{s}"] = paired(outcome, "gateway_prod", "raw", s)
        found[f"litellm_cpu_vs_gateway:{s}"] = paired(outcome, "litellm", "gateway", s)
        prod = paired(outcome, "gateway_prod", "gateway", s)
        found[f"production_overhead_pct:{s}"] = None if prod is None else (prod - 1) * 100
        found[f"added_p99_ms:{s}"] = get("gateway", s, "added_p99_ms")
        found[f"production_added_p99_ms:{s}"] = get("gateway_prod", s, "added_p99_ms")
    frame = outcome.frame_bytes.get("image_4k_stream")
    single_extra = get("gateway", "image_4k_stream", "rss_extra_single_mb")
    four_extra = get("gateway", "image_4k_stream", "rss_extra_four_mb")
    found.update({
        "chat_rps_vs_litellm": ratio(get("gateway", "chat", "rps"), get("litellm", "chat", "rps")),
        "chat_rps_vs_raw_floor": ratio(get("gateway", "chat", "rps"), get("raw", "chat", "rps")),
        "chat_stream_added_ttfb_ms": get("gateway", "chat_stream", "added_ttfb_ms"),
        "image_4k_extra_peak_rss_per_frame": (
            ratio(single_extra * MB, frame) if single_extra is not None and frame else None),
        "image_4k_four_extra_peak_rss_per_frame": (
            ratio(four_extra * MB, FOUR_STREAMS * frame) if four_extra is not None and frame else None),
        "gateway_idle_rss_mb": outcome.idle_rss.get("gateway", 0) / MB if "gateway" in outcome.idle_rss else None,
        "gateway_prod_idle_rss_mb": (outcome.idle_rss.get("gateway_prod", 0) / MB
                                     if "gateway_prod" in outcome.idle_rss else None),
    })
    return found


def ratios_of_medians(rows: list[dict]) -> dict[str, float | None]:
    """The CPU ratios as one median ÷ another (the reading ``ratios`` does not judge by)."""
    def cpu(target: str, scenario: str) -> float | None:
        return cell(rows, target, scenario, "cpu_us_per_request")

    found: dict[str, float | None] = {}
    for s in CPU_SCENARIOS:
        found[f"cpu_vs_raw:{s}"] = ratio(cpu("gateway", s), cpu("raw", s))
        found[f"litellm_cpu_vs_gateway:{s}"] = ratio(cpu("litellm", s), cpu("gateway", s))
        prod = ratio(cpu("gateway_prod", s), cpu("gateway", s))
        found[f"production_overhead_pct:{s}"] = None if prod is None else (prod - 1) * 100
    return found


def verdicts(found: dict) -> dict[str, str]:
    """"met", "missed" or "n/a" (not measured in this run) per goal."""
    out = {}
    for key, _label, goal, higher in GOALS:
        value = found.get(key)
        out[key] = "n/a" if value is None else ("met" if (value >= goal if higher else value <= goal) else "missed")
    return out


def fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def added_text(added_ms: float | None, direct_ms: float | None) -> str:
    """An added latency as the summary line reads it. Below zero it measures nothing: the direct
    path's own tail (the fake vendor writing a 4K frame to 16 connections at once starves some of
    them for seconds) was longer than the relay's, which reads at its own pace."""
    if added_ms is not None and added_ms < 0:
        return f"n/a (the direct path's own p99, {fmt(direct_ms, 0)} ms, is longer)"
    return f"{fmt(added_ms, 2)} ms"


def write_json(doc: dict, out_dir: Path, kind: str) -> Path:
    """``doc`` as ``<out_dir>/<kind>-<date>-<time>.json``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    return path


def grid(head: list[str], body: list[list[str]], left: int = 2) -> str:
    """Columns padded to their widest cell; the first ``left`` (names) left-aligned, numbers right-aligned."""
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True)))
             for line in [head, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def table(rows: list[dict], outcome: Outcome) -> str:
    head = ["scenario", "target", "CPU µs/req", "÷ raw", "req/s", "p50 ms", "p99 ms", "+p50 ms", "+p99 ms",
            "TTFB ms", "+TTFB ms", "RSS idle MB", "RSS peak MB", "errors"]
    body = [[SCENARIOS[r["scenario"]].label, r["target"], fmt(r["cpu_us_per_request"], 0), fmt(r.get("cpu_vs_raw"), 2),
             fmt(r["rps"], 0), fmt(r["p50_ms"], 2), fmt(r["p99_ms"], 2), fmt(r["added_p50_ms"], 2),
             fmt(r["added_p99_ms"], 2), fmt(r["ttfb_ms"], 2), fmt(r["added_ttfb_ms"], 2), fmt(r["rss_idle_mb"], 0),
             fmt(r["rss_peak_mb"], 0), str(r["errors"])] for r in rows]
    lines = [grid(head, body), ""]
    found = ratios(rows, outcome)
    judged = verdicts(found)
    for key, label, goal, higher in GOALS:
        lines.append(f"{label}: {fmt(found.get(key), 2)} (goal {'≥' if higher else '≤'} {goal:g}: {judged[key]})")
    direct_p99 = {r["scenario"]: r["p99_ms"] for r in rows if r["target"] == "direct"}
    for s in CPU_SCENARIOS:
        if found.get(f"added_p99_ms:{s}") is not None:
            lines.append(f"added p99 latency, {SCENARIOS[s].label}: "
                         f"{added_text(found[f'added_p99_ms:{s}'], direct_p99.get(s))} bare, "
                         f"{added_text(found.get(f'production_added_p99_ms:{s}'), direct_p99.get(s))} production")
    for target, scenarios in outcome.unavailable.items():
        for scenario, why in scenarios.items():
            if why != "not offered by this target":
                lines.append(f"not measured: {scenario} on {target}: {why[:200]}")
    for target, why in outcome.failed_targets.items():
        lines.append(f"did not run: {target}: {why.splitlines()[0][:300] if why else ''}")
    lines.append(workdir_line(outcome.workdir))
    return "\n".join(lines)


def write(outcome: Outcome, rows: list[dict]) -> tuple[Path, Path]:
    out = outcome.options.out_dir
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(outcome.started))
    json_path, png_path = out / f"bench-{stamp}.json", out / f"bench-{stamp}.png"
    options = outcome.options
    found = ratios(rows, outcome)
    document = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(outcome.started)),
        "machine": machine(),
        "workdir": outcome.workdir,
        "options": {"duration": options.duration, "concurrency": options.concurrency, "rounds": options.rounds,
                    "slices": options.slices, "targets": options.targets, "scenarios": options.scenarios, "loadgen": outcome.loadgen,
                    "gateway_env": options.gateway_env, "preset": options.preset},
        "frame_bytes": outcome.frame_bytes,
        "summary": rows,
        "ratios": found,
        "verdicts": verdicts(found),
        "ratios_of_medians": ratios_of_medians(rows),
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
    panels = [("cpu_us_per_request", "server CPU µs per request (log)", True), ("rps", "requests/s (log)", True),
              ("p50_ms", "p50 latency, ms (log)", True)]
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
    axes[1].legend(fontsize=8)
    fig.suptitle("Studio gateway benchmark: same fake upstream, same run, 1 worker")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
