"""``python -m bench instructions``: machine instructions per request, gateway and raw relay, under callgrind.

CPU time per request is the benchmark's headline, but on a shared machine it swings with what
else runs there (the same build can read 2× the raw relay in one run and 3× in the next). The
instructions a server executes for a request do not: this mode runs the gateway and the raw
relay under valgrind's callgrind (``apt-get install valgrind``), warms each, zeroes its counters,
sends a fixed number of requests, dumps the counters and divides. Both servers run about 50 times
slower there, so only the ratio between them means anything; a memory-bound step (copying a big
image) weighs less in instructions than in time, so the CPU ratio of ``bench run`` stays the
target's measure, and this one is the steady reading of it beside the noise.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from bench import runner
from bench.machine import machine
from bench.processes import Server
from bench.runner import log
from bench.scenarios import SCENARIOS, TEXT_SCENARIOS, Request
from bench.targets import Context, GatewayOptions, Running, start_gateway, start_gateway_production, start_raw
from bench.workdir import describe_workdir, make_workdir, workdir_line

TARGET_RATIO = 2.5  # the gateway's instructions per request at most this many times the raw relay's
TARGET_EXTRA = 0.05  # the production preset's at most this much over the bare one's
_TOTAL = re.compile(rb"^(?:summary|totals):\s*(\d+)", re.MULTILINE)


@dataclass
class Options(GatewayOptions):
    requests: int = 300  # counted per scenario and server
    warmup: int = 40
    scenarios: list[str] = field(default_factory=lambda: list(TEXT_SCENARIOS))
    production: bool = False  # count the "production" preset's gateway too
    features: bool = False  # and the production gateway without each of its features (``FEATURES``)


# Under callgrind a minute of the clock holds about a fiftieth of the requests it holds at full
# speed, so work the clock starts weighs fifty times its share per request. The snapshot's full
# reload at its longest age (a minute by default) then fell in one scenario's count and not in
# another's, as the run's timing had it; the count is taken with it an hour apart. The periodic
# work of the production features is stretched by ``STRETCH``, about the slowdown, so each round
# of it serves as many requests as at full speed: a counter lease's end and renewal, a batch of
# request log lines, a hand-over of the request counts to the metrics (together 31,000 of a
# buffered chat call's instructions unstretched: 2.4% of the count, a fiftieth of that in time).
# So are the recorder's wait for company (100 ms fills a batch of 256 rows at full speed, and
# about four rows at this speed: each row then paid most of a write's fixed cost) and the
# snapshot's check of its revision (every 5 s: once in 15,000 calls at full speed, once in 250
# here); unstretched they were 73,000–77,000 instructions of a call (about 7%). So is the note of
# a healthy upstream's last success (every 10 s: its row updated through a thread, and with Redis
# the shared breaker state through a client of its own): unstretched, 4,000 instructions of a
# bare chat call and 16,000 of a production one, where at full speed it is once in 15,000 calls.
STRETCH = 60
CLOCK = {"STUDIO_SNAPSHOT_MAX_AGE": "3600",
         "STUDIO_COUNTER_LEASE_SECONDS": str(1.0 * STRETCH),
         "STUDIO_REQUEST_LOG_BATCH_SECONDS": str(0.05 * STRETCH),
         "STUDIO_METRICS_INTERVAL": str(1.0 * STRETCH),
         "STUDIO_RECORDER_LINGER_MS": str(100 * STRETCH),
         "STUDIO_CACHE_TTL": str(5 * STRETCH),
         "STUDIO_UPSTREAM_SUCCESS_NOTE_SECONDS": str(10 * STRETCH)}


# The production preset's features, each with the variable that turns it off and its label: with
# ``--features`` the production gateway is counted again without each one, and what a feature
# adds is the production count less that one's.
FEATURES = {"limits": ("BENCH_SPEND_LIMITS", "limits and budgets"),
            "metrics": ("STUDIO_METRICS", "metrics"),
            "log": ("STUDIO_REQUEST_LOG", "request log")}


def without(feature: str) -> Callable[[Context, Server], Running]:
    """What starts the production gateway with ``feature`` off (server ``prod_without_<feature>``)."""
    variable = FEATURES[feature][0]

    def start(ctx: Context, upstream: Server) -> Running:
        return start_gateway(replace(ctx, gateway_env={**ctx.gateway_env, variable: "0"}), upstream,
                             preset="production", name=f"prod_without_{feature}")

    return start


def counted_env(options: Options) -> dict[str, str]:
    """The gateway's extra variables under callgrind: ``CLOCK``'s, unless the run sets them."""
    return {**CLOCK, **options.gateway_env}


def valgrind() -> tuple[str, str]:
    found = shutil.which("valgrind"), shutil.which("callgrind_control")
    if found[0] is None or found[1] is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    return found[0], found[1]


def callgrind_prefix(valgrind_path: str, dumps: Path) -> tuple[str, ...]:
    return (valgrind_path, "--tool=callgrind", f"--callgrind-out-file={dumps}/callgrind.%p",
            "--dump-instr=no", "--dump-line=no")


def total_instructions(dump: bytes) -> int | None:
    """The instructions a callgrind dump counted (its ``summary:`` or ``totals:`` line)."""
    found = _TOTAL.search(dump)
    return int(found.group(1)) if found else None


def dumped(dumps: Path, pid: int, timeout: float = 60.0) -> int:
    """The count in the dump ``callgrind_control --dump`` just asked of ``pid``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in sorted(dumps.glob(f"callgrind.{pid}.*")):
            total = total_instructions(path.read_bytes())
            if total is not None:
                return total
        time.sleep(0.2)
    raise RuntimeError(f"callgrind wrote no dump for process {pid} within {timeout:g} s")


def count(server: Server, request: Request, options: Options, control: str, dumps: Path, workdir: Path) -> dict:
    """Instructions per request of ``server`` for ``options.requests`` requests of ``request``."""
    pid = server.tree()[-1].pid  # uvicorn's one worker: the process under callgrind
    body_file = workdir / "body.json"
    body_file.write_bytes(request.body)
    url = server.base_url + request.path

    def load(requests: int) -> dict:
        done = runner.python_load(url, body_file, request.headers, concurrency=options.concurrency,
                                  duration=3600, max_requests=requests)
        if done["errors"]:
            raise RuntimeError(f"{server.name}: {done['errors']} of {done['requests']} requests failed: "
                               f"{done['first_error']}\n{server.log_tail()}")
        return done

    load(options.warmup)
    subprocess.run([control, "--zero", str(pid)], capture_output=True, check=True, timeout=120)
    done = load(options.requests)
    for old in dumps.glob(f"callgrind.{pid}.*"):
        old.unlink()
    subprocess.run([control, "--dump", str(pid)], capture_output=True, check=True, timeout=120)
    instructions = dumped(dumps, pid)
    return {"requests": done["requests"], "instructions": instructions,
            "instructions_per_request": instructions / done["requests"]}


def run(options: Options) -> dict:
    valgrind_path, control = valgrind()
    started = time.time()
    workdir = make_workdir("studio-bench-instructions-", options.workdir)
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, workdir, True)
        place = describe_workdir(workdir)
        dumps = workdir / "callgrind"
        dumps.mkdir()
        upstream = runner.start_upstream(workdir)
        stack.callback(upstream.stop)
        ctx = replace(options.context(workdir, upstream.base_url), gateway_env=counted_env(options),
                      server_prefix=callgrind_prefix(valgrind_path, dumps), ready_timeout=600.0)
        counted: dict[str, dict[str, dict]] = {}
        servers = [("gateway", start_gateway), ("raw", start_raw)]
        if options.production or options.features:
            servers.insert(1, ("gateway_prod", start_gateway_production))
        if options.features:
            servers[2:2] = [(f"prod_without_{feature}", without(feature)) for feature in FEATURES]
        for name, start in servers:
            log(f"starting {name} under callgrind")
            target = start(ctx, upstream)
            try:
                for scenario_name in options.scenarios:
                    request = runner.checked_request(target, SCENARIOS[scenario_name], what=name, timeout=600)
                    log(f"{name}: {SCENARIOS[scenario_name].label}, {options.requests} requests")
                    counted.setdefault(scenario_name, {})[name] = count(target.server, request, options, control,
                                                                        dumps, workdir)
            finally:
                target.server.stop()
        rows = [row(scenario_name, counted[scenario_name]) for scenario_name in options.scenarios]
    return {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
            "machine": machine(), "workdir": place,
            "options": {"requests": options.requests, "warmup": options.warmup,
                        "concurrency": options.concurrency, "scenarios": options.scenarios,
                        "preset": options.preset, "gateway_env": options.gateway_env,
                        "production": options.production or options.features, "features": options.features},
            "target_ratio": TARGET_RATIO, "target_extra": TARGET_EXTRA, "rows": rows}


def row(scenario: str, counted: dict[str, dict]) -> dict:
    """One scenario's counts, the gateway's ratio to the raw relay and, with the production
    gateway counted, what its features add over the bare one; each with its verdict."""
    gateway = counted["gateway"]["instructions_per_request"]
    ratio = gateway / counted["raw"]["instructions_per_request"]
    out = {"scenario": scenario, **counted, "ratio": ratio, "verdict": "met" if ratio <= TARGET_RATIO else "missed"}
    if "gateway_prod" in counted:
        extra = counted["gateway_prod"]["instructions_per_request"] / gateway - 1
        out.update(production_extra=extra, production_verdict="met" if extra <= TARGET_EXTRA else "missed")
        production = counted["gateway_prod"]["instructions_per_request"]
        costs = {feature: production - counted[f"prod_without_{feature}"]["instructions_per_request"]
                 for feature in FEATURES if f"prod_without_{feature}" in counted}
        if costs:  # each feature's instructions per request, and its share of the bare gateway's
            out["features"] = {feature: {"instructions_per_request": cost, "share": cost / gateway}
                               for feature, cost in costs.items()}
    return out


def table(doc: dict) -> str:
    from bench.report import fmt, grid

    production = any("gateway_prod" in r for r in doc["rows"])
    head = ["scenario", "verdict", "gateway M instr/req", "raw M instr/req", "gateway ÷ raw"]
    if production:
        head += ["production M instr/req", "production extra", "verdict"]
    body = []
    for r in doc["rows"]:
        line = [SCENARIOS[r["scenario"]].label, r["verdict"], fmt(r["gateway"]["instructions_per_request"] / 1e6, 3),
                fmt(r["raw"]["instructions_per_request"] / 1e6, 3), fmt(r["ratio"], 2)]
        if production:
            line += [fmt(r["gateway_prod"]["instructions_per_request"] / 1e6, 3),
                     f"{r['production_extra'] * 100:+.1f}%", r["production_verdict"]]
        body.append(line)
    out = grid(head, body)
    featured = [r for r in doc["rows"] if "features" in r]
    if featured:
        head = ["scenario", *(f"{FEATURES[f][1]} (share)" for f in FEATURES), "sum", "production extra"]
        body = []
        for r in featured:
            found = r["features"]
            cells = [f"{found[f]['instructions_per_request'] / 1e3:+,.0f} k ({found[f]['share'] * 100:+.1f}%)"
                     if f in found else "—" for f in FEATURES]
            body.append([SCENARIOS[r["scenario"]].label, *cells,
                         f"{sum(v['share'] for v in found.values()) * 100:+.1f}%", f"{r['production_extra'] * 100:+.1f}%"])
        out += "\n\nWhat each production feature adds (production less production without it, instructions per request):\n"
        out += grid(head, body)
    return out + "\n" + workdir_line(doc.get("workdir"))

