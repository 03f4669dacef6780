"""One benchmark run: start the fake vendor and every target, interleave the rounds, stop everything.

Rounds interleave the targets (direct, gateway, LiteLLM, raw floor, then again) so a slow phase of
the machine hits all of them alike. Within a round, a scenario's load is cut into slices of at
least ``SLICE_SECONDS`` that take turns between the targets (the 4K frame's excepted: its
requests are long), so a slow phase of a few seconds falls on every target of the ratio rather
than on whichever was measured then. Servers run on one core, the load generator and the fake
vendor on the other. Every process is stopped, and the temporary directory removed, on any exit.
"""

from __future__ import annotations

import contextlib
import http.client
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from bench import processes, wrk
from bench.processes import LOAD_CORE, Monitor, Server
from bench.scenarios import SCENARIOS, Request, Scenario
from bench.targets import TARGETS, GatewayOptions, Running, install_litellm
from bench.workdir import describe_workdir, make_workdir

# An idle server's RSS is read once it has had no request for this long: longer than a gateway
# web process keeps the memory of its last frames (``STUDIO_MALLOC_IDLE_SECONDS``: 1 s, so given
# back 1-2 s after its last request).
IDLE_SECONDS = 3.0
# Each measurement starts from a server that has been running without a request for this long,
# with the others paused: a gateway paused right after its last load keeps that load's memory
# (it cannot give it back while stopped), and it would then be the starting point of its next
# measurement, hiding the peak of a 4K stream and inflating the RSS of the scenarios after it.
SETTLE_SECONDS = IDLE_SECONDS
# Concurrent streams of the big frame whose extra peak RSS is reported per frame in flight.
FOUR_STREAMS = 4
# A slice of load lasts at least this long: the requests cut off when it ends (their CPU counted,
# themselves not) stay a small part of it.
SLICE_SECONDS = 2.0


@dataclass
class Options(GatewayOptions):
    duration: float = 8.0
    rounds: int = 3
    targets: list[str] = field(default_factory=lambda: list(TARGETS))
    scenarios: list[str] = field(default_factory=lambda: list(SCENARIOS))
    probe_requests: int = 200  # sequential requests of the TTFB probe (chat); the 4K probe does fewer
    loadgen: str = "auto"  # auto | wrk | python
    install_litellm: bool = True
    slices: int = 4  # turns a round's load of a scenario takes per target (at most duration / SLICE_SECONDS)

    def slices_of(self, scenario: Scenario) -> int:
        if scenario.large:
            return 1
        return max(1, min(self.slices, int(self.duration // SLICE_SECONDS)))


@dataclass
class Probes:
    """A stream's single-connection probe (time to first byte) and the big frame's RSS, each with
    the RSS just before it (the peak minus that is the probe's own cost)."""

    probe: dict | None = None
    probe_rss_peak: int | None = None
    probe_rss_start: int | None = None
    # The big frame only: the same on FOUR_STREAMS connections at once (extra peak RSS per frame in flight).
    four_rss_peak: int | None = None
    four_rss_start: int | None = None


@dataclass(kw_only=True)
class Measurement(Probes):
    """One target's load of one scenario in one round (its slices joined), plus its probes."""

    target: str
    scenario: str
    round: int
    load: dict
    cpu_us_per_request: float
    rss_peak: int


@dataclass
class Outcome:
    options: Options
    started: float
    loadgen: str
    measurements: list[Measurement] = field(default_factory=list)
    idle_rss: dict[str, int] = field(default_factory=dict)
    unavailable: dict[str, dict[str, str]] = field(default_factory=dict)  # target → scenario → why
    failed_targets: dict[str, str] = field(default_factory=dict)
    frame_bytes: dict[str, int] = field(default_factory=dict)
    log_tails: dict[str, str] = field(default_factory=dict)  # each server's last output, for errors
    workdir: dict | None = None  # where the servers worked (``bench.workdir.describe_workdir``)


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run(options: Options) -> Outcome:
    tool = choose_loadgen(options.loadgen)
    outcome = Outcome(options=options, started=time.time(), loadgen=tool)
    workdir = make_workdir("studio-bench-", options.workdir)
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, workdir, True)
        outcome.workdir = describe_workdir(workdir)
        upstream = start_upstream(workdir)
        stack.callback(upstream.stop)
        ctx = options.context(workdir, upstream.base_url)
        running: dict[str, Running] = {}
        for name in options.targets:
            if name == "litellm" and options.install_litellm:
                try:
                    install_litellm(log)
                except (subprocess.SubprocessError, OSError) as exc:
                    outcome.failed_targets[name] = f"install failed: {exc}"
                    continue
            log(f"starting {name}")
            try:
                running[name] = TARGETS[name].start(ctx, upstream)
            except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
                outcome.failed_targets[name] = str(exc)[:2000]
                log(f"{name} did not start: {str(exc)[:500]}")
                continue
            if running[name].server is not upstream:
                stack.callback(running[name].server.stop)
        scenarios = [SCENARIOS[s] for s in options.scenarios]
        available = warm_up(running, scenarios, outcome)
        time.sleep(IDLE_SECONDS)
        for name, target in running.items():
            outcome.idle_rss[name] = target.server.rss_bytes()
        for round_no in range(1, options.rounds + 1):
            for scenario in scenarios:
                order = [(name, target, available[(name, scenario.name)])
                         for name, target in round_order(running, round_no) if (name, scenario.name) in available]
                outcome.measurements += measure_round(order, running, upstream, scenario, round_no, options, tool,
                                                      workdir)
        outcome.log_tails = {name: target.server.log_tail() for name, target in running.items()}
    return outcome


def round_order(running: dict[str, Running], round_no: int) -> list[tuple[str, Running]]:
    """The targets in the order a round measures them: as started in odd rounds, the other way
    round in even ones, so of two targets a ratio compares neither is always measured first."""
    order = list(running.items())
    return order if round_no % 2 else order[::-1]


@contextlib.contextmanager
def only_running(name: str, running: dict[str, Running], upstream: Server):
    """Pause every other server (not the fake vendor) while ``name`` is measured."""
    others = [t.server for n, t in running.items() if n != name and t.server is not upstream]
    for server in others:
        server.pause()
    try:
        yield
    finally:
        for server in others:
            server.resume()


def choose_loadgen(wanted: str) -> str:
    if wanted == "wrk" and not wrk.available():
        raise SystemExit("wrk is not installed (apt-get install wrk), or use --loadgen python")
    if wanted == "auto":
        return "wrk" if wrk.available() else "python"
    return wanted


def start_upstream(workdir: Path) -> Server:
    port = processes.free_port()
    log("starting the fake upstream (building its images takes a few seconds)")
    return processes.start(
        "upstream", [sys.executable, "-m", "bench.fake_upstream", "--port", str(port)], port=port,
        workdir=workdir, cwd=Path(__file__).resolve().parent.parent, core=LOAD_CORE, ready_timeout=180,
    )


def send_once(server: Server, request: Request, timeout: float = 120) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    try:
        conn.request("POST", request.path, body=request.body, headers=request.headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def checked_request(target: Running, scenario: Scenario, times: int = 1, *, what: str = "",
                    timeout: float = 120) -> Request:
    """``target``'s request for ``scenario``, sent ``times`` times with each answer checked
    (``looks_right``): in a mode that measures one gateway, a wrong answer stops the run, with the
    server's log (``what`` names the server in the error; its name by default)."""
    request = target.dialect.request(scenario)
    if request is None:
        raise RuntimeError(f"{what or target.server.name} offers no {scenario.label}")
    for _ in range(times):
        status, body = send_once(target.server, request, timeout)
        if status != 200 or not looks_right(scenario, body):
            raise RuntimeError(f"{what or target.server.name}, {scenario.label}: HTTP {status}: "
                               f"{body[:300].decode('utf-8', 'replace')}\n{target.server.log_tail()}")
    return request


def warm_up(running: dict[str, Running], scenarios: list[Scenario],
            outcome: Outcome) -> dict[tuple[str, str], Request]:
    """One check request per pair (a route that is missing is reported, not measured), then a few
    more so caches, pools and lazy imports are warm before anything is timed."""
    available: dict[tuple[str, str], Request] = {}
    for name, target in running.items():
        for scenario in scenarios:
            request = target.dialect.request(scenario)
            if request is None:
                outcome.unavailable.setdefault(name, {})[scenario.name] = "not offered by this target"
                continue
            try:
                status, body = send_once(target.server, request)
            except OSError as exc:
                outcome.unavailable.setdefault(name, {})[scenario.name] = f"{type(exc).__name__}: {exc}"
                continue
            if status != 200 or not looks_right(scenario, body):
                reason = f"HTTP {status}: {body[:300].decode('utf-8', 'replace')}"
                outcome.unavailable.setdefault(name, {})[scenario.name] = reason
                log(f"{scenario.label} on {name} is not measured: {reason}")
                continue
            if name == "direct":
                outcome.frame_bytes[scenario.name] = len(body)
            for _ in range(3 if scenario.large else 20):
                send_once(target.server, request)
            available[(name, scenario.name)] = request
    return available


# What a whole answer of each text format carries: its stream's last event (as the JSON's type:
# LiteLLM leaves out the events' names), its buffered body's type.
ENDS = {"chat": (b"[DONE]", b'"chat.completion"'), "messages": (b'"message_stop"', b'"type":"message"'),
        "responses": (b'"response.completed"', b'"object":"response"')}


def looks_right(scenario: Scenario, body: bytes) -> bool:
    """A 200 that does not carry what was asked for would make every number meaningless."""
    if scenario.family in ENDS:
        streamed, buffered = ENDS[scenario.family]
        return (streamed in body) if scenario.stream else (buffered in body)
    minimum = 10_000_000 if scenario.large else 1_000_000
    return b'"inlineData"' in body and len(body) >= minimum


def measure_round(order: list[tuple[str, Running, Request]], running: dict[str, Running], upstream: Server,
                  scenario: Scenario, round_no: int, options: Options, tool: str, workdir: Path) -> list[Measurement]:
    """One round of ``scenario`` on each target of ``order``: each one's probes (and, unsliced, its
    load) after it has settled, then its slices of load, the targets taking turns (forwards, then
    backwards, so neither end of the order always goes first)."""
    slices = options.slices_of(scenario)
    probed: dict[str, Probes] = {}
    loads: dict[str, list[Load]] = {name: [] for name, _, _ in order}
    for name, target, request in order:
        log(f"round {round_no}/{options.rounds}: {scenario.label} on {name}")
        with only_running(name, running, upstream):
            time.sleep(SETTLE_SECONDS)
            probed[name] = probe(target, scenario, request, options, workdir)
            if slices == 1:
                loads[name].append(load(target, request, options.duration, options, tool, workdir))
    if slices > 1:
        log(f"round {round_no}/{options.rounds}: {scenario.label}, {slices} turns of load each")
        for turn in range(slices):
            for name, target, request in (order if turn % 2 == 0 else order[::-1]):
                with only_running(name, running, upstream):
                    loads[name].append(load(target, request, options.duration / slices, options, tool, workdir))
    return [measurement(name, scenario, round_no, loads[name], probed[name]) for name, _, _ in order]


def measure(name: str, target: Running, scenario: Scenario, request: Request, round_no: int,
            options: Options, tool: str, workdir: Path) -> Measurement:
    """One target's probes and load of ``scenario``, in one go."""
    probed = probe(target, scenario, request, options, workdir)
    return measurement(name, scenario, round_no, [load(target, request, options.duration, options, tool, workdir)],
                       probed)


@dataclass
class Load:
    """One run of the load generator, and the server's CPU and peak RSS during it."""

    load: dict
    cpu_seconds: float
    rss_peak: int


def body_file(workdir: Path, request: Request) -> Path:
    found = workdir / "body.json"
    found.write_bytes(request.body)
    return found


def probe(target: Running, scenario: Scenario, request: Request, options: Options, workdir: Path) -> Probes:
    out = Probes()
    url, body = target.server.base_url + request.path, body_file(workdir, request)
    if scenario.stream:
        # Time to first byte on one connection: no queueing in the numbers, only the relay's own delay.
        count = max(5, options.probe_requests // 10) if scenario.large else options.probe_requests
        with Monitor(target.server) as watch:
            out.probe = python_load(url, body, request.headers, concurrency=1,
                                    duration=max(options.duration, 5.0), max_requests=count)
        out.probe_rss_peak, out.probe_rss_start = watch.usage.rss_peak, watch.usage.rss_start
    if scenario.large:
        with Monitor(target.server) as watch:
            python_load(url, body, request.headers, concurrency=FOUR_STREAMS,
                        duration=max(options.duration, 5.0), max_requests=FOUR_STREAMS * 3)
        out.four_rss_peak, out.four_rss_start = watch.usage.rss_peak, watch.usage.rss_start
    return out


def load(target: Running, request: Request, duration: float, options: Options, tool: str, workdir: Path) -> Load:
    url = target.server.base_url + request.path
    with Monitor(target.server) as watch:
        if tool == "wrk":
            done = wrk.run(url, request.body, request.headers, concurrency=options.concurrency,
                           duration=duration, workdir=workdir, pin=processes.pin_prefix(LOAD_CORE))
        else:
            done = python_load(url, body_file(workdir, request), request.headers, concurrency=options.concurrency,
                               duration=duration)
    return Load(done, watch.usage.cpu_seconds, watch.usage.rss_peak)


# A load summary's fields that add up over slices; its latencies are weighed by each slice's answers.
_SUMMED = ("requests", "ok", "errors", "status_errors", "socket_errors", "seconds", "bytes")
_WEIGHED = ("p50_ms", "p90_ms", "p99_ms", "mean_ms", "ttfb_p50_ms", "ttfb_p99_ms")


def joined(loads: list[Load]) -> dict:
    """The load summaries of a target's slices as one: counts added up, requests/s over the whole
    time, the highest ``max_ms``, and each percentile as the slices' mean weighed by their answers
    (close to, not exactly, the percentile of all the answers together)."""
    if len(loads) == 1:
        return loads[0].load
    out = dict(loads[0].load)
    summaries = [part.load for part in loads]
    for key in _SUMMED:
        if key in out:
            out[key] = sum(s.get(key, 0) for s in summaries)
    answers = sum(max(s["ok"], 0) for s in summaries) or 1
    for key in _WEIGHED:
        if key in out:
            out[key] = round(sum(s.get(key, 0) * s["ok"] for s in summaries) / answers, 4)
    if "max_ms" in out:
        out["max_ms"] = max(s.get("max_ms", 0) for s in summaries)
    if "statuses" in out:  # the Python generator's
        statuses: dict[str, int] = {}
        for s in summaries:
            for status, count in s.get("statuses", {}).items():
                statuses[status] = statuses.get(status, 0) + count
        out["statuses"] = dict(sorted(statuses.items()))
        out["first_error"] = next((s["first_error"] for s in summaries if s.get("first_error")), None)
        histogram: dict[float, int] = {}
        for s in summaries:
            for upper, count in s.get("histogram_ms", []):
                histogram[upper] = histogram.get(upper, 0) + count
        out["histogram_ms"] = sorted(histogram.items())
    out["rps"] = round(out["ok"] / out["seconds"], 2) if out.get("seconds") else 0.0
    out["slices"] = len(loads)
    return out


def measurement(name: str, scenario: Scenario, round_no: int, loads: list[Load], probed: Probes) -> Measurement:
    summary = joined(loads)
    cpu = sum(part.cpu_seconds for part in loads)
    return Measurement(target=name, scenario=scenario.name, round=round_no, load=summary,
                       cpu_us_per_request=cpu / max(summary["ok"], 1) * 1e6,
                       rss_peak=max(part.rss_peak for part in loads), **vars(probed))


def python_load(url: str, body_file: Path, headers: dict[str, str], *, concurrency: int, duration: float,
                max_requests: int | None = None) -> dict:
    command = [*processes.pin_prefix(LOAD_CORE), sys.executable, "-m", "bench.loadgen", "--url", url,
               "--body-file", str(body_file), "--concurrency", str(concurrency), "--duration", str(duration)]
    for key, value in headers.items():
        command += ["--header", f"{key}: {value}"]
    if max_requests is not None:
        command += ["--max-requests", str(max_requests)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=duration + 150, check=False,
                          cwd=Path(__file__).resolve().parent.parent)
    if done.returncode != 0:
        raise RuntimeError(f"the load generator failed: {done.stderr[-1500:]}")
    return orjson.loads(done.stdout.strip().splitlines()[-1])


def median(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None
