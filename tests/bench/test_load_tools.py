"""The load generators' arithmetic and their wiring: percentiles, wrk's script and result line."""

from __future__ import annotations

import pytest

from bench import wrk
from bench.fake_upstream import FakeVendor, serve
from bench.loadgen import LatencyRecorder, check_loopback, percentile, run_load
from bench.payloads import Payloads
from bench.scenarios import SCENARIOS, Dialect


def test_percentile_is_nearest_rank() -> None:
    samples = [float(v) for v in range(100, 0, -1)]  # 1..100, unsorted
    assert percentile(samples, 50) == 50
    assert percentile(samples, 99) == 99
    assert percentile(samples, 100) == 100
    assert percentile([7.0], 99) == 7.0
    assert percentile([], 50) == 0.0


def test_histogram_counts_every_sample() -> None:
    recorder = LatencyRecorder()
    for ms in (0.5, 0.6, 5, 50, 51):
        recorder.add(ms / 1000)
    buckets = recorder.histogram()
    assert sum(count for _, count in buckets) == 5
    assert [upper for upper, _ in buckets] == sorted(upper for upper, _ in buckets)


def test_load_only_goes_to_loopback() -> None:
    check_loopback("http://127.0.0.1:9/x")
    with pytest.raises(ValueError):
        check_loopback("http://10.0.0.1:9/x")


async def test_python_generator_measures_a_live_server() -> None:
    server = await serve("127.0.0.1", 0, FakeVendor(Payloads(small=True), stream_chunks=3))
    port = server.sockets[0].getsockname()[1]
    try:
        request = Dialect("gpt-4o-mini", None, "/v1beta", "x-goog-api-key", "k").request(SCENARIOS["chat_stream"])
        result = await run_load(f"http://127.0.0.1:{port}{request.path}", request.body, request.headers,
                                concurrency=4, duration=5.0, max_requests=60)
        denied = await run_load(f"http://127.0.0.1:{port}{request.path}", request.body, {},
                                concurrency=2, duration=5.0, max_requests=4)
    finally:
        server.close()
        await server.wait_closed()
    summary = result.summary()
    assert summary["requests"] == 60 and summary["ok"] == 60 and summary["statuses"] == {"200": 60}
    assert 0 < summary["ttfb_p50_ms"] <= summary["p50_ms"] <= summary["p99_ms"]
    assert summary["rps"] > 0
    assert denied.summary()["errors"] == 4 and "HTTP 401" in denied.first_error


def test_wrk_script_quotes_anything_and_reports_in_one_line() -> None:
    script = wrk.script("POST", b'{"a":"]]"}', {"Authorization": "Bearer k"})
    assert "wrk.body = [=[{\"a\":\"]]\"}]=]" in script
    assert "wrk.headers[ [[Authorization]] ] = [[Bearer k]]" in script
    line = ('BENCH_WRK {"requests":110,"duration_us":2000000,"bytes":5,"connect":0,"read":1,"write":0,'
            '"status":10,"timeout":0,"p50_us":1500,"p90_us":2000,"p99_us":3000,"max_us":9000,"mean_us":1600.0}')
    summary = wrk.parse_output("Running 2s test\n" + line + "\n")
    assert summary["ok"] == 100 and summary["errors"] == 11 and summary["rps"] == 50.0
    assert summary["p50_ms"] == 1.5 and summary["p99_ms"] == 3.0
    with pytest.raises(RuntimeError):
        wrk.parse_output("Running 2s test\nno result\n")


@pytest.mark.skipif(not wrk.available(), reason="wrk is not installed (apt-get install wrk)")
async def test_wrk_run_posts_the_body_with_its_headers(tmp_path) -> None:
    import asyncio

    server = await serve("127.0.0.1", 0, FakeVendor(Payloads(small=True)))
    port = server.sockets[0].getsockname()[1]
    request = Dialect("gpt-4o-mini", None, "/v1beta", "x-goog-api-key", "k").request(SCENARIOS["chat"])
    try:
        summary = await asyncio.to_thread(
            wrk.run, f"http://127.0.0.1:{port}{request.path}", request.body, request.headers,
            concurrency=2, duration=1, workdir=tmp_path, pin=[])
    finally:
        server.close()
        await server.wait_closed()
    # The fake answers 401/400 to a request without the key or body: every answer must be a 200.
    assert summary["requests"] > 100 and summary["errors"] == 0 and summary["ok"] == summary["requests"]
