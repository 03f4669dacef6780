"""A round of the benchmark: each scenario's load cut into turns the targets take in alternation,
and the turns of one target joined into its measurement."""

from __future__ import annotations

import contextlib

import pytest

from bench import runner
from bench.runner import Load, Options, Probes
from bench.scenarios import SCENARIOS, Request


def wrk_like(ok: int, seconds: float, p50: float, p99: float, max_ms: float) -> dict:
    return {"tool": "wrk", "requests": ok + 1, "ok": ok, "errors": 1, "status_errors": 1, "socket_errors": 0,
            "seconds": seconds, "rps": ok / seconds, "bytes": 100 * ok, "p50_ms": p50, "p90_ms": p50,
            "p99_ms": p99, "max_ms": max_ms, "mean_ms": p50}


def test_turns_are_joined_into_one_load() -> None:
    joined = runner.joined([Load(wrk_like(300, 2.0, 1.0, 4.0, 9.0), 0.3, 10),
                            Load(wrk_like(100, 2.0, 3.0, 8.0, 20.0), 0.2, 30)])
    assert joined["ok"] == 400 and joined["requests"] == 402 and joined["errors"] == 2
    assert joined["seconds"] == 4.0 and joined["rps"] == 100.0 and joined["bytes"] == 40_000
    assert joined["p50_ms"] == pytest.approx(1.5) and joined["p99_ms"] == pytest.approx(5.0)
    assert joined["max_ms"] == 20.0 and joined["slices"] == 2
    measured = runner.measurement("gateway", SCENARIOS["chat"], 1, [Load(wrk_like(300, 2.0, 1.0, 4.0, 9.0), 0.3, 10),
                                                                   Load(wrk_like(100, 2.0, 3.0, 8.0, 20.0), 0.2, 30)],
                                  Probes())
    assert measured.cpu_us_per_request == pytest.approx(0.5 / 400 * 1e6) and measured.rss_peak == 30


def test_the_python_generators_statuses_and_histograms_add_up() -> None:
    def python_like(ok: int, error: str | None) -> dict:
        return {"tool": "python", "requests": ok, "ok": ok, "errors": 0, "statuses": {"200": ok},
                "seconds": 2.0, "rps": ok / 2, "bytes": ok, "p50_ms": 1.0, "p90_ms": 1.0, "p99_ms": 1.0,
                "ttfb_p50_ms": 0.5, "ttfb_p99_ms": 0.5, "histogram_ms": [[1.0, ok]], "first_error": error}

    joined = runner.joined([Load(python_like(10, None), 0.1, 1), Load(python_like(30, "HTTP 502"), 0.1, 1)])
    assert joined["statuses"] == {"200": 40} and joined["histogram_ms"] == [(1.0, 40)]
    assert joined["first_error"] == "HTTP 502" and joined["ttfb_p50_ms"] == 0.5


def test_slices_last_two_seconds_at_least_and_the_4k_frame_runs_whole() -> None:
    assert Options(duration=8.0, slices=4).slices_of(SCENARIOS["chat"]) == 4
    assert Options(duration=5.0, slices=4).slices_of(SCENARIOS["chat"]) == 2
    assert Options(duration=2.0, slices=4).slices_of(SCENARIOS["chat_stream"]) == 1
    assert Options(duration=8.0, slices=4).slices_of(SCENARIOS["image_4k_stream"]) == 1


def test_a_round_takes_turns_between_the_targets(monkeypatch) -> None:
    order: list[tuple[str, str, float]] = []
    running = {"gateway": object(), "raw": object()}
    monkeypatch.setattr(runner, "SETTLE_SECONDS", 0.0)

    @contextlib.contextmanager
    def only(name, running_, upstream):
        order.append(("only", name, 0.0))
        yield

    def probe(target, scenario, request, options, workdir):
        order.append(("probe", next(n for n, t in running.items() if t is target), 0.0))
        return Probes()

    def load(target, request, duration, options, tool, workdir):
        name = next(n for n, t in running.items() if t is target)
        order.append(("load", name, duration))
        return Load(wrk_like(100, duration, 1.0, 2.0, 3.0), 0.01 if name == "raw" else 0.03, 5)

    monkeypatch.setattr(runner, "only_running", only)
    monkeypatch.setattr(runner, "probe", probe)
    monkeypatch.setattr(runner, "load", load)
    request = Request("/v1/chat/completions", b"{}", {})
    targets = [(name, target, request) for name, target in running.items()]
    found = runner.measure_round(targets, running, None, SCENARIOS["chat"], 1, Options(duration=8.0, slices=4),
                                 "wrk", None)
    loads = [(name, duration) for what, name, duration in order if what == "load"]
    assert loads == [("gateway", 2.0), ("raw", 2.0), ("raw", 2.0), ("gateway", 2.0),
                     ("gateway", 2.0), ("raw", 2.0), ("raw", 2.0), ("gateway", 2.0)]
    assert [what for what, _, _ in order[:4]] == ["only", "probe", "only", "probe"]  # probes first, each alone
    assert [(m.target, m.load["ok"]) for m in found] == [("gateway", 400), ("raw", 400)]
    assert found[0].cpu_us_per_request == pytest.approx(3 * found[1].cpu_us_per_request)
