"""The soak's arithmetic and command line: chunks, drift, the ±10% verdict, the table and the files."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from bench.__main__ import parser, soak_options
from bench.soak import MB, chunk_sizes, drift_pct, slope_mb_per_100k, table, verdict, write


def sample(requests: int, mb: float, peak_mb: float | None = None) -> dict:
    rss = int(mb * MB)
    return {"requests": requests, "rss_bytes": rss, "drift_pct": drift_pct(rss, 100 * MB),
            "chunk_peak_bytes": int((peak_mb or mb) * MB), "rps": 1000.0, "errors": 0, "p50_ms": 1.0,
            "p99_ms": 2.0}


def test_chunks_add_up_to_the_exact_request_count() -> None:
    assert chunk_sizes(100_000, 20) == [5_000] * 20
    assert chunk_sizes(10, 3) == [4, 3, 3]
    assert chunk_sizes(3, 20) == [1, 1, 1]  # never an empty chunk
    assert sum(chunk_sizes(99_999, 7)) == 99_999


def test_drift_is_percent_of_the_baseline() -> None:
    assert drift_pct(110 * MB, 100 * MB) == pytest.approx(10.0)
    assert drift_pct(95 * MB, 100 * MB) == pytest.approx(-5.0)
    assert drift_pct(5, 0) == 0.0


def test_verdict_is_on_the_final_reading_and_reports_the_max() -> None:
    flat = verdict(100 * MB, [sample(50_000, 112), sample(100_000, 109.9, peak_mb=130)], tolerance_pct=10,
                   requested=100_000)
    assert flat["verdict"] == "met"
    assert flat["final_drift_pct"] == pytest.approx(9.9, abs=0.01)
    assert flat["max_mb"] == pytest.approx(112, abs=0.01) and flat["max_at_requests"] == 50_000
    assert flat["max_drift_pct"] == pytest.approx(12, abs=0.01)
    assert flat["in_load_peak_mb"] == pytest.approx(130, abs=0.01)

    leak = verdict(100 * MB, [sample(50_000, 105), sample(100_000, 111)], tolerance_pct=10, requested=100_000)
    assert leak["verdict"] == "missed"
    shrink = verdict(100 * MB, [sample(100_000, 89)], tolerance_pct=10, requested=100_000)
    assert shrink["verdict"] == "missed"  # ± : a large drop is not "flat" either
    short = verdict(100 * MB, [sample(40_000, 101)], tolerance_pct=10, requested=100_000)
    assert short["verdict"] == "met (incomplete)"
    assert verdict(100 * MB, [], tolerance_pct=10, requested=1)["verdict"] == "n/a"


def test_slope_shows_steady_growth() -> None:
    assert slope_mb_per_100k([(0, 100 * MB), (50_000, 105 * MB), (100_000, 110 * MB)]) == pytest.approx(10)
    assert slope_mb_per_100k([(0, 100 * MB)]) is None


def test_command_line_defaults_and_checks() -> None:
    args = parser().parse_args(["soak"])
    options = soak_options(args)
    assert (options.requests, options.concurrency, options.scenario, options.samples) == (100_000, 16, "chat", 20)
    assert options.warmup == 2_000 and options.tolerance_pct == 10.0
    args = parser().parse_args(["soak", "--requests", "500", "--scenario", "chat_stream", "--samples", "5",
                                "--gateway-env", "A=b"])
    options = soak_options(args)
    assert (options.requests, options.scenario, options.samples, options.gateway_env) == (500, "chat_stream", 5,
                                                                                          {"A": "b"})
    for bad in (["soak", "--requests", "0"], ["soak", "--scenario", "video"], ["soak", "--samples", "-1"]):
        with pytest.raises(SystemExit):
            parser().parse_args(bad)


def test_table_and_files(tmp_path: Path) -> None:
    samples = [sample(5, 101), sample(10, 103, peak_mb=120)]
    doc = {"started_epoch": 1_700_000_000.0, "baseline_rss_bytes": 100 * MB, "samples": samples,
           "options": {"scenario": "chat", "concurrency": 4}, "rps": 1234.0, "load_seconds": 8.1, "errors": 0,
           "result": verdict(100 * MB, samples, tolerance_pct=10, requested=10)}
    text = table(doc)
    assert "after warm-up" in text and "+3.0" in text and ": met" in text and "max 103.0 MB" in text
    json_path, png_path = write(doc, tmp_path)
    assert orjson.loads(json_path.read_bytes())["result"]["verdict"] == "met"
    if png_path is not None:
        assert png_path.stat().st_size > 1000
