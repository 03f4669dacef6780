"""The run's report: CPU per request against the raw relay, the issue's goals met or missed, the
gateway presets on the command line, and the scale mode's arithmetic."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import report, runner, scale
from bench.__main__ import gateway_fields, parser, scale_options, soak_options, split_env
from bench.runner import Measurement, Options, Outcome
from bench.targets import PRESETS, Context, gateway_environment


def measurement(target: str, scenario: str, cpu: float, *, rps: float = 1000.0, p99: float = 5.0,
                round_no: int = 1) -> Measurement:
    load = {"rps": rps, "p50_ms": 2.0, "p99_ms": p99, "errors": 0, "requests": 100}
    return Measurement(target=target, scenario=scenario, round=round_no, load=load, cpu_us_per_request=cpu,
                       rss_peak=200 * report.MB)


def outcome(cells: dict[tuple[str, str], float]) -> Outcome:
    targets = list(dict.fromkeys(t for t, _ in cells))
    scenarios = list(dict.fromkeys(s for _, s in cells))
    out = Outcome(options=Options(targets=targets, scenarios=scenarios), started=0.0, loadgen="python")
    out.measurements = [measurement(t, s, cpu) for (t, s), cpu in cells.items()]
    out.idle_rss = {"gateway": 90 * report.MB, "gateway_prod": 95 * report.MB}
    return out


def test_cpu_per_request_is_the_headline_and_every_goal_gets_a_verdict() -> None:
    run = outcome({("direct", "chat"): 100, ("gateway", "chat"): 600, ("gateway_prod", "chat"): 660,
                   ("litellm", "chat"): 15_000, ("raw", "chat"): 300,
                   ("gateway", "chat_stream"): 1000, ("raw", "chat_stream"): 250})
    rows = report.summarize(run)
    gateway = next(r for r in rows if r["target"] == "gateway" and r["scenario"] == "chat")
    assert gateway["cpu_vs_raw"] == pytest.approx(2.0)
    text = report.table(rows, run)
    header = text.splitlines()[0]
    assert header.index("CPU µs/req") < header.index("req/s")  # CPU first, then requests/s
    found = report.ratios(rows, run)
    judged = report.verdicts(found)
    assert judged["cpu_vs_raw:chat"] == "met"
    assert judged["cpu_vs_raw:chat_stream"] == "missed"  # 4× the raw relay
    assert found["litellm_cpu_vs_gateway:chat"] == pytest.approx(25.0) and judged["litellm_cpu_vs_gateway:chat"] == "met"
    assert found["production_overhead_pct:chat"] == pytest.approx(10.0)
    assert judged["production_overhead_pct:chat"] == "missed"
    assert judged["cpu_vs_raw:image"] == "n/a"  # not measured in this run
    assert judged["gateway_idle_rss_mb"] == "met"
    assert "CPU/req gateway ÷ raw relay, chat, streamed: 4.00 (goal ≤ 2.5: missed)" in text
    assert "production features on: extra CPU/req %, chat, buffered: 10.00 (goal ≤ 5: missed)" in text


def test_cpu_ratios_are_the_median_of_each_rounds_own_ratio() -> None:
    # The machine slows down from round to round; in round 1 the production gateway ran in a slow
    # spell of its own. Each round's own ratio says 4 % (and 2.5× the raw relay) but for that one.
    cells = [(1, 600, 1200, 240), (2, 900, 936, 360), (3, 1200, 1248, 480)]
    run = outcome({})
    run.options = Options(targets=["gateway", "gateway_prod", "raw"], scenarios=["chat"])
    run.measurements = [measurement(target, "chat", cpu, round_no=n) for n, gateway, prod, raw in cells
                        for target, cpu in (("gateway", gateway), ("gateway_prod", prod), ("raw", raw))]
    rows = report.summarize(run)
    found = report.ratios(rows, run)
    assert found["production_overhead_pct:chat"] == pytest.approx(4.0)
    assert report.verdicts(found)["production_overhead_pct:chat"] == "met"
    assert found["cpu_vs_raw:chat"] == pytest.approx(2.5)
    assert next(r for r in rows if r["target"] == "gateway_prod")["cpu_vs_raw"] == pytest.approx(2.6)
    medians = report.ratios_of_medians(rows)  # 1200 ÷ 900: the slow spell counted as the gateway's
    assert medians["production_overhead_pct:chat"] == pytest.approx(100 / 3)
    # A round that measured only one of the two does not count.
    run.measurements.append(measurement("gateway", "chat", 5000, round_no=4))
    assert report.ratios(report.summarize(run), run)["production_overhead_pct:chat"] == pytest.approx(4.0)


def test_rounds_alternate_the_order_of_the_targets() -> None:
    running = {"gateway": "a", "gateway_prod": "b", "raw": "c"}
    assert [name for name, _ in runner.round_order(running, 1)] == ["gateway", "gateway_prod", "raw"]
    assert [name for name, _ in runner.round_order(running, 2)] == ["raw", "gateway_prod", "gateway"]
    assert [name for name, _ in runner.round_order(running, 3)] == ["gateway", "gateway_prod", "raw"]


def test_big_frame_memory_is_judged_per_frame_for_one_stream_and_per_frame_in_flight_for_four() -> None:
    run = outcome({("direct", "image_4k_stream"): 2000, ("gateway", "image_4k_stream"): 40_000})
    frame = 15 * report.MB
    run.frame_bytes = {"image_4k_stream": frame}
    gateway = next(m for m in run.measurements if m.target == "gateway")
    gateway.probe_rss_start, gateway.probe_rss_peak = 100 * report.MB, 100 * report.MB + 27 * report.MB
    gateway.four_rss_start, gateway.four_rss_peak = 100 * report.MB, 100 * report.MB + 150 * report.MB
    found = report.ratios(report.summarize(run), run)
    judged = report.verdicts(found)
    assert found["image_4k_extra_peak_rss_per_frame"] == pytest.approx(1.8)
    assert judged["image_4k_extra_peak_rss_per_frame"] == "met"
    assert found["image_4k_four_extra_peak_rss_per_frame"] == pytest.approx(2.5)  # 150 MB ÷ (4 × 15 MB)
    assert judged["image_4k_four_extra_peak_rss_per_frame"] == "missed"


def test_gateway_env_takes_a_preset_or_variables(tmp_path: Path) -> None:
    args = parser().parse_args(["run", "--gateway-env", "production", "--gateway-env", "A=1",
                                "--redis-url", "redis://127.0.0.1:6379/9"])
    assert split_env(args.gateway_env) == ("production", {"A": "1"})
    with pytest.raises(SystemExit):
        parser().parse_args(["run", "--gateway-env", "turbo"])
    ctx = Context(workdir=tmp_path, upstream_url="http://127.0.0.1:1", gateway_env={"A": "1"},
                  redis_url="redis://127.0.0.1:6379/9")
    production = gateway_environment(ctx, "production", "gateway_prod")
    assert production["REDIS_URL"] == "redis://127.0.0.1:6379/9"
    assert production["BENCH_SPEND_LIMITS"] == production["STUDIO_METRICS"] == production["STUDIO_REQUEST_LOG"] == "1"
    assert production["STUDIO_COUNTER_PREFIX"].startswith("bench:")  # a run never sees another's counters
    assert production["A"] == "1"
    bare = gateway_environment(ctx)
    assert bare["REDIS_URL"] == "" and bare["STUDIO_METRICS"] == "0"
    assert set(PRESETS) == {"bare", "production"}


def test_every_mode_takes_the_gateway_options_alike(tmp_path: Path) -> None:
    from bench import instructions, profile

    common = ["--gateway-env", "A=1", "--redis-url", "redis://127.0.0.1:6379/9", "--concurrency", "3",
              "--out", str(tmp_path), "--workdir", str(tmp_path / "work")]
    built = [
        (soak_options(parser().parse_args(["soak", *common])), "bare"),
        (scale_options(parser().parse_args(["scale", *common])), "production"),  # scale's own default
        (profile.Options(**gateway_fields(parser().parse_args(["profile", *common]))), "bare"),
        (instructions.Options(**gateway_fields(parser().parse_args(["instructions", "--gateway-env", "production",
                                                                    *common]))), "production"),
    ]
    for options, preset in built:
        assert (options.preset, options.gateway_env, options.redis_url, options.concurrency, options.out_dir,
                options.workdir) == (preset, {"A": "1"}, "redis://127.0.0.1:6379/9", 3, tmp_path, tmp_path / "work")
        ctx = options.context(tmp_path, "http://127.0.0.1:1")
        assert (ctx.preset, ctx.gateway_env, ctx.redis_url, ctx.upstream_url) == (
            preset, {"A": "1"}, "redis://127.0.0.1:6379/9", "http://127.0.0.1:1")


def test_scale_compares_cpu_per_request_with_one_worker() -> None:
    options = scale_options(parser().parse_args(["scale", "--workers", "1,2", "--duration", "1"]))
    assert options.workers == [1, 2] and options.preset == "production"
    runs = [{"workers": w, "scenario": "chat", "round": 1, "rps": rps, "p50_ms": 1.0, "p99_ms": 2.0, "errors": 0,
             "cpu_us_per_request": cpu} for w, rps, cpu in ((1, 1000.0, 500.0), (2, 1100.0, 550.0))]
    rows = scale.summarize(runs)
    assert [r["cpu_vs_one_worker"] for r in rows] == [pytest.approx(1.0), pytest.approx(1.1)]
    text = scale.table({"rows": rows})
    assert "chat, buffered" in text and "1.10" in text


def test_an_added_p99_below_zero_is_reported_as_measuring_nothing() -> None:
    # The direct path's tail longer than the relay's (as the fake vendor's, writing 4K frames to
    # many connections at once): "added" latency would read negative.
    run = outcome({("direct", "image_4k_stream"): 2_000, ("gateway", "image_4k_stream"): 20_000,
                   ("gateway_prod", "image_4k_stream"): 21_000, ("direct", "chat"): 100, ("gateway", "chat"): 600,
                   ("gateway_prod", "chat"): 660})
    for m in run.measurements:
        m.load["p99_ms"] = {"direct": 4_000.0 if m.scenario == "image_4k_stream" else 3.0, "gateway": 500.0,
                            "gateway_prod": 520.0}[m.target]
    text = report.table(report.summarize(run), run)
    assert ("added p99 latency, 4K frame 15 MB, streamed: n/a (the direct path's own p99, 4,000 ms, is longer) bare, "
            "n/a (the direct path's own p99, 4,000 ms, is longer) production") in text
    assert "added p99 latency, chat, buffered: 497.00 ms bare, 517.00 ms production" in text
