"""``bench instructions``: a server's instructions per request from callgrind's counters, and the ratio's verdict."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

pytest.importorskip("psutil", reason="bench requirements (bench/requirements.txt) not installed")

from bench import instructions, processes  # noqa: E402
from bench.__main__ import parser  # noqa: E402
from bench.scenarios import SCENARIOS, TEXT_SCENARIOS, Dialect  # noqa: E402

REPO = Path(__file__).resolve().parents[2]

# The head of a dump as callgrind 3.19 writes it (``--dump-instr=no --dump-line=no``).
DUMP = b"""# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
cmd:  /usr/bin/python3 -m uvicorn studio.asgi:application
part: 2

desc: I1 cache:
desc: Timerange: Basic block 1000 - 2000
desc: Trigger: Client Request: dump

positions: line
events: Ir
summary: 371250000

ob=(1) /usr/bin/python3.11
fl=(1) ???
fn=(1) _PyEval_EvalFrameDefault
0 1200
totals: 371250000
"""


def test_the_count_is_the_dumps_summary() -> None:
    assert instructions.total_instructions(DUMP) == 371_250_000
    assert instructions.total_instructions(DUMP.replace(b"summary: 371250000\n", b"")) == 371_250_000
    assert instructions.total_instructions(b"# callgrind format\nevents: Ir\n") is None  # not written out yet


def fake_control(tmp_path: Path, dumps: Path, total: int) -> Path:
    """A ``callgrind_control`` at the process boundary: ``--zero`` is noted, ``--dump`` writes a dump."""
    script = tmp_path / "callgrind_control"
    script.write_text(f"""#!{sys.executable}
import sys
from pathlib import Path
action, pid = sys.argv[1], sys.argv[2]
with open({str(tmp_path / "calls")!r}, "a") as calls:
    calls.write(action + "\\n")
if action == "--dump":
    Path({str(dumps)!r}, f"callgrind.{{pid}}.1").write_text("events: Ir\\nsummary: {total}\\n")
""")
    script.chmod(0o755)
    return script


def test_counts_the_requests_sent_between_zeroing_and_dumping(tmp_path: Path) -> None:
    port = processes.free_port()
    server = processes.start("upstream", [sys.executable, "-m", "bench.fake_upstream", "--port", str(port), "--small"],
                             port=port, workdir=tmp_path, cwd=REPO, core=processes.LOAD_CORE, ready_timeout=120)
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    (dumps / f"callgrind.{server.process.pid}.1").write_text("events: Ir\nsummary: 5\n")  # an older dump
    control = fake_control(tmp_path, dumps, 1_500_000)
    try:
        request = Dialect("gpt-4o-mini", None, "/v1beta", "x-goog-api-key", "k").request(SCENARIOS["chat"])
        options = instructions.Options(requests=30, warmup=5, concurrency=3)
        counted = instructions.count(server, request, options, str(control), dumps, tmp_path)
    finally:
        server.stop()
    assert (tmp_path / "calls").read_text().split() == ["--zero", "--dump"]
    assert counted["requests"] == 30
    assert counted["instructions"] == 1_500_000
    assert counted["instructions_per_request"] == 50_000


def test_defaults_are_the_text_scenarios_and_the_table_gives_the_verdict() -> None:
    args = parser().parse_args(["instructions"])
    assert args.scenarios == TEXT_SCENARIOS == ["chat", "chat_stream", "messages_stream", "responses_stream"]
    assert (args.requests, args.warmup, args.concurrency) == (300, 40, 16)
    doc = {"rows": [
        {"scenario": "chat", "gateway": {"instructions_per_request": 1.2e6}, "raw": {"instructions_per_request": 0.5e6},
         "ratio": 2.4, "verdict": "met"},
        {"scenario": "responses_stream", "gateway": {"instructions_per_request": 2.6e6},
         "raw": {"instructions_per_request": 0.9e6}, "ratio": 2.89, "verdict": "missed"},
    ]}
    lines = instructions.table(doc).splitlines()
    assert lines[2].split()[:4] == ["chat,", "buffered", "met", "1.200"] and lines[2].endswith("2.40")
    assert "missed" in lines[3] and lines[3].endswith("2.89")


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_a_run_under_callgrind_counts_both_servers(tmp_path: Path) -> None:
    # Its own process, as a user runs it: the command pins itself to a core and takes over SIGTERM.
    work = tmp_path / "work"
    done = subprocess.run([sys.executable, "-m", "bench", "instructions", "--requests", "12", "--warmup", "3",
                           "--concurrency", "2", "--scenarios", "chat", "--out", str(tmp_path), "--workdir", str(work)],
                          cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    written = list(tmp_path.glob("instructions-*.json"))
    assert len(written) == 1
    doc = orjson.loads(written[0].read_bytes())
    row = doc["rows"][0]
    assert row["scenario"] == "chat"
    # The servers worked in a folder of the one asked for, reported with its cost and removed after.
    assert doc["workdir"]["parent"] == str(work) and doc["workdir"]["file_create_cpu_us"] > 0
    assert list(work.iterdir()) == [] and f"working folder: {work}" in done.stdout
    assert row["gateway"]["requests"] == row["raw"]["requests"] == 12
    # A Python server's request is hundreds of thousands of instructions; the gateway does more than the relay.
    assert 100_000 < row["raw"]["instructions_per_request"] < row["gateway"]["instructions_per_request"]
    assert row["verdict"] == ("met" if row["ratio"] <= 2.5 else "missed")
    assert "chat, buffered" in done.stdout and str(written[0]) in done.stdout


def test_the_production_gateway_is_read_against_the_bare_one() -> None:
    counted = {"gateway": {"instructions_per_request": 2.0e6}, "raw": {"instructions_per_request": 1.0e6},
               "gateway_prod": {"instructions_per_request": 2.2e6}}
    row = instructions.row("messages_stream", counted)
    assert (row["ratio"], row["verdict"]) == (2.0, "met")
    assert row["production_extra"] == pytest.approx(0.10) and row["production_verdict"] == "missed"
    close = instructions.row("chat", {**counted, "gateway_prod": {"instructions_per_request": 2.08e6}})
    assert close["production_verdict"] == "met"
    assert "production_extra" not in instructions.row("chat", {k: counted[k] for k in ("gateway", "raw")})
    lines = instructions.table({"rows": [row]}).splitlines()
    assert "production extra" in lines[0]
    assert lines[2].split()[-3:] == ["2.200", "+10.0%", "missed"]
    assert parser().parse_args(["instructions", "--production"]).production is True


def test_the_work_of_the_clock_is_stretched_in_the_count_unless_the_run_sets_it() -> None:
    """Under callgrind a minute holds a fiftieth of its requests: the snapshot's reload at its
    longest age would weigh fifty times its share in whichever scenario it fell, and a lease's
    renewal, a batch of log lines or a metrics hand-over would serve fifty times fewer requests."""
    found = instructions.counted_env(instructions.Options())
    assert found["STUDIO_SNAPSHOT_MAX_AGE"] == "3600"
    assert float(found["STUDIO_COUNTER_LEASE_SECONDS"]) == float(found["STUDIO_METRICS_INTERVAL"]) == 60
    assert float(found["STUDIO_REQUEST_LOG_BATCH_SECONDS"]) == 3
    # The recorder's wait for company and the snapshot's revision check, 60 times theirs too.
    assert (float(found["STUDIO_RECORDER_LINGER_MS"]), float(found["STUDIO_CACHE_TTL"])) == (6000, 300)
    # And the note of a healthy upstream's success (its row, the breaker state in Redis).
    assert float(found["STUDIO_UPSTREAM_SUCCESS_NOTE_SECONDS"]) == 600
    chosen = instructions.Options(gateway_env={"STUDIO_SNAPSHOT_MAX_AGE": "60", "STUDIO_CACHE_TTL": "1"})
    assert instructions.counted_env(chosen) == {**found, "STUDIO_SNAPSHOT_MAX_AGE": "60", "STUDIO_CACHE_TTL": "1"}


def test_each_production_feature_is_read_as_production_less_production_without_it() -> None:
    counted = {"gateway": {"instructions_per_request": 1.0e6}, "raw": {"instructions_per_request": 0.5e6},
               "gateway_prod": {"instructions_per_request": 1.2e6},
               "prod_without_limits": {"instructions_per_request": 1.08e6},
               "prod_without_metrics": {"instructions_per_request": 1.18e6},
               "prod_without_log": {"instructions_per_request": 1.16e6}}
    row = instructions.row("chat", counted)
    found = row["features"]
    assert list(found) == ["limits", "metrics", "log"]
    assert found["limits"]["instructions_per_request"] == pytest.approx(120_000)
    assert found["limits"]["share"] == pytest.approx(0.12)
    assert found["metrics"]["share"] == pytest.approx(0.02) and found["log"]["share"] == pytest.approx(0.04)
    lines = instructions.table({"rows": [row]}).splitlines()
    at = lines.index(next(line for line in lines if line.startswith("What each production feature adds")))
    assert "limits and budgets" in lines[at + 1] and "request log" in lines[at + 1]
    assert lines[at + 3].split()[2:] == ["+120", "k", "(+12.0%)", "+20", "k", "(+2.0%)", "+40", "k", "(+4.0%)",
                                          "+18.0%", "+20.0%"]
    assert "features" not in instructions.row("chat", {k: counted[k] for k in ("gateway", "raw", "gateway_prod")})
    args = parser().parse_args(["instructions", "--features"])
    assert args.features is True and args.production is False


def test_with_features_the_production_gateway_is_counted_without_each_one(monkeypatch) -> None:
    """Each variant is the production preset with one feature's variable set to 0, in a home of its own."""
    started: list[tuple[dict[str, str], str | None, str]] = []
    monkeypatch.setattr(instructions, "start_gateway",
                        lambda ctx, upstream, preset=None, name="gateway": started.append((ctx.gateway_env, preset,
                                                                                           name)))
    ctx = instructions.Options(gateway_env={"X": "1"}).context(Path("/tmp"), "http://127.0.0.1:1")
    for feature in instructions.FEATURES:
        instructions.without(feature)(ctx, None)
    assert started == [({"X": "1", "BENCH_SPEND_LIMITS": "0"}, "production", "prod_without_limits"),
                       ({"X": "1", "STUDIO_METRICS": "0"}, "production", "prod_without_metrics"),
                       ({"X": "1", "STUDIO_REQUEST_LOG": "0"}, "production", "prod_without_log")]
