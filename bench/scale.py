"""``python -m bench scale``: the gateway with 1 and then 2 worker processes sharing Redis.

Each worker count gets a fresh gateway (``uvicorn --workers N``, the "production" preset by
default: limits and budgets in Redis, metrics and request logs on) measured on the same
scenarios against the same fake vendor: requests/s and CPU per request (the whole process tree),
so what cross-process state costs (limits, budgets, breaker) shows as CPU per request that grows
with the number of workers. On a two-core machine the workers share the server core (the load
generator and the fake vendor hold the other): requests/s then cannot grow, CPU per request
still tells; ``--server-cpus`` gives them more cores where there are more.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from dataclasses import dataclass, field, replace

from bench import runner
from bench.machine import machine
from bench.runner import log
from bench.scenarios import SCENARIOS
from bench.targets import GatewayOptions, start_gateway
from bench.workdir import describe_workdir, make_workdir, workdir_line


@dataclass
class Options(GatewayOptions):
    duration: float = 8.0
    rounds: int = 1
    workers: list[int] = field(default_factory=lambda: [1, 2])
    scenarios: list[str] = field(default_factory=lambda: ["chat", "chat_stream"])
    preset: str = "production"
    server_cpus: str | None = None
    loadgen: str = "auto"


def run(options: Options) -> dict:
    tool = runner.choose_loadgen(options.loadgen)
    started = time.time()
    rows: list[dict] = []
    measure_options = runner.Options(duration=options.duration, concurrency=options.concurrency,
                                      probe_requests=20, loadgen=tool)
    workdir = make_workdir("studio-bench-scale-", options.workdir)
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, workdir, True)
        place = describe_workdir(workdir)
        upstream = runner.start_upstream(workdir)
        stack.callback(upstream.stop)
        for workers in options.workers:
            name = f"gateway_w{workers}"
            ctx = replace(options.context(workdir, upstream.base_url), workers=workers,
                          server_cpus=options.server_cpus)
            log(f"starting the gateway with {workers} worker(s)")
            target = start_gateway(ctx, upstream, name=name)
            try:
                for scenario_name in options.scenarios:
                    scenario = SCENARIOS[scenario_name]
                    # Every worker warm (imports, pools, snapshot).
                    request = runner.checked_request(target, scenario, 20 * workers,
                                                     what=f"the gateway with {workers} worker(s)")
                    for round_no in range(1, options.rounds + 1):
                        log(f"{scenario.label}, {workers} worker(s), round {round_no}/{options.rounds}")
                        m = runner.measure(name, target, scenario, request, round_no, measure_options, tool, workdir)
                        rows.append({"workers": workers, "scenario": scenario_name, "round": round_no,
                                     "rps": m.load["rps"], "p50_ms": m.load["p50_ms"], "p99_ms": m.load["p99_ms"],
                                     "errors": m.load["errors"], "cpu_us_per_request": m.cpu_us_per_request,
                                     "rss_peak_mb": m.rss_peak / 2**20})
            finally:
                target.server.stop()
    return {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
            "machine": machine(), "workdir": place,
            "options": {"duration": options.duration, "concurrency": options.concurrency, "rounds": options.rounds,
                        "workers": options.workers, "scenarios": options.scenarios, "preset": options.preset,
                        "gateway_env": options.gateway_env, "server_cpus": options.server_cpus, "loadgen": tool},
            "rows": summarize(rows), "runs": rows}


def summarize(rows: list[dict]) -> list[dict]:
    """Median of the rounds per (workers, scenario), and CPU per request relative to one worker."""
    out = []
    for key in dict.fromkeys((r["workers"], r["scenario"]) for r in rows):
        runs = [r for r in rows if (r["workers"], r["scenario"]) == key]
        out.append({"workers": key[0], "scenario": key[1],
                    **{k: runner.median([r[k] for r in runs]) for k in ("rps", "p50_ms", "p99_ms",
                                                                          "cpu_us_per_request")},
                    "errors": sum(r["errors"] for r in runs)})
    for row in out:
        one = next((r for r in out if r["workers"] == 1 and r["scenario"] == row["scenario"]), None)
        row["cpu_vs_one_worker"] = (row["cpu_us_per_request"] / one["cpu_us_per_request"]
                                    if one and one["cpu_us_per_request"] else None)
    return out


def table(doc: dict) -> str:
    from bench.report import fmt, grid

    head = ["scenario", "workers", "CPU µs/req", "÷ 1 worker", "req/s", "p50 ms", "p99 ms", "errors"]
    body = [[SCENARIOS[r["scenario"]].label, str(r["workers"]), fmt(r["cpu_us_per_request"], 0),
             fmt(r["cpu_vs_one_worker"], 2), fmt(r["rps"], 0), fmt(r["p50_ms"], 2), fmt(r["p99_ms"], 2),
             str(r["errors"])] for r in doc["rows"]]
    return grid(head, body) + "\n" + workdir_line(doc.get("workdir"))

