"""``python -m bench profile``: flame graphs of the gateway's process under each scenario's load.

Starts the fake vendor and one gateway (a preset, as in ``bench run``), warms it, then records
it with py-spy (``py-spy record --pid``, sampling from outside, no change to the process) while
the load generator runs one scenario; one SVG per scenario in the output directory. Over the same
load it reads the worker's CPU by thread (``bench.threads``), which py-spy's samples of the
interpreter's holder leave out; the split goes to ``profile-<preset>-threads-*.json`` and is printed.
The raw relay then takes the same load (unprofiled), and its split is printed beneath the gateway's:
the gateway's event loop, set against the relay's whole call, is the part of the gap the relay has a
counterpart for; the rest is in threads it has none of (``--no-raw`` leaves it out).
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench import report, runner, threads
from bench.runner import log
from bench.scenarios import SCENARIOS, Request, Scenario
from bench.targets import GatewayOptions, Running, start_gateway, start_raw
from bench.workdir import describe_workdir, make_workdir, workdir_line


@dataclass
class Options(GatewayOptions):
    duration: float = 8.0
    scenarios: list[str] = field(default_factory=lambda: list(SCENARIOS))
    rate: int = 250  # samples per second
    format: str = "flamegraph"  # or "raw": collapsed stacks, one line per stack (for scripts)
    # False: py-spy reads the process while it runs (--nonblocking), which costs it nothing but, on a
    # busy machine, cuts many stacks short. True: it pauses the process for each sample, so every
    # stack is whole (the process runs slower; shares, not rates, are what to read then), but a
    # sample then lands at a system call far more often than the call's share of the time: on a
    # two-core virtual machine, production chat read 9.9% of its samples at the lines asking for
    # the running event loop (a ``getpid`` each) against 0.1% unpaused, and answering ``getpid``
    # without a system call (a preloaded library, as an experiment) changed no CPU reading.
    paused: bool = False
    raw: bool = True  # also load the raw relay (unprofiled) and print its split beside the gateway's


def py_spy() -> str:
    found = shutil.which("py-spy") or str(Path(runner.sys.executable).parent / "py-spy")
    if not Path(found).exists():
        raise SystemExit("py-spy is not installed (pip install py-spy)")
    return found


def spy_command(spy: str, pid: int, output: Path, options: Options) -> list[str]:
    command = [spy, "record", "--pid", str(pid), "--rate", str(options.rate), "--format", options.format,
               "--output", str(output), "--gil", "--duration", str(int(options.duration) + 1)]
    return command if options.paused else [*command, "--nonblocking"]


def run(options: Options) -> tuple[list[Path], str]:
    """The files written (one per scenario, then the split by thread) and the split's table."""
    spy = py_spy()
    options.out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    by_thread: dict[str, list[threads.ThreadCpu]] = {}
    raw_by_thread: dict[str, list[threads.ThreadCpu]] = {}
    workdir = make_workdir("studio-bench-profile-", options.workdir)
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, workdir, True)
        place = describe_workdir(workdir)  # the recorder thread's split pays its file creation
        upstream = runner.start_upstream(workdir)
        stack.callback(upstream.stop)
        ctx = options.context(workdir, upstream.base_url)
        target = start_gateway(ctx, upstream)
        stack.callback(target.server.stop)
        worker = target.server.tree()[-1].pid  # uvicorn's one worker (or the server itself)
        raw: Running | None = None
        if options.raw:
            raw = start_raw(ctx, upstream)
            stack.callback(raw.server.stop)
            raw_worker = raw.server.tree()[-1].pid
        for name in options.scenarios:
            scenario = SCENARIOS[name]
            request, body_file = _warmed(target, scenario, workdir / "body.json")
            svg = options.out_dir / f"profile-{options.preset}-{name}.{'svg' if options.format == 'flamegraph' else 'txt'}"
            log(f"profiling {scenario.label} ({options.duration:g} s)")
            spy_process = subprocess.Popen(spy_command(spy, worker, svg, options),
                                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(0.5)
            by_thread[name] = _split_under_load(target, request, body_file, worker, options)
            _, err = spy_process.communicate(timeout=60)
            if spy_process.returncode != 0:
                raise RuntimeError(f"py-spy failed: {err[-1500:]}")
            written.append(svg)
            if raw is not None:
                log(f"the raw relay under the same load ({options.duration:g} s)")
                raw_request, raw_body = _warmed(raw, scenario, workdir / "raw-body.json")
                raw_by_thread[name] = _split_under_load(raw, raw_request, raw_body, raw_worker, options)
    doc = {"preset": options.preset, "paused": options.paused, "workdir": place,
           "threads": {name: [dataclasses.asdict(row) for row in rows] for name, rows in by_thread.items()},
           "raw_threads": {name: [dataclasses.asdict(row) for row in rows] for name, rows in raw_by_thread.items()}}
    written.append(report.write_json(doc, options.out_dir, f"profile-{options.preset}-threads"))
    return written, threads.table(by_thread, raw_by_thread) + "\n" + workdir_line(place)


def _warmed(target: Running, scenario: Scenario, body_file: Path) -> tuple[Request, Path]:
    """``target``'s request for ``scenario``, checked by sending it a few times (which warms the
    server), and the file holding its body for the load generator."""
    request = runner.checked_request(target, scenario, 3 if scenario.large else 20)
    body_file.write_bytes(request.body)
    return request, body_file


def _split_under_load(target: Running, request: Request, body_file: Path, pid: int,
                      options: Options) -> list[threads.ThreadCpu]:
    """``pid``'s CPU by thread, per call, over one stretch of the scenario's load on ``target``."""
    before = threads.read(pid)
    load = runner.python_load(target.server.base_url + request.path, body_file, request.headers,
                              concurrency=options.concurrency, duration=options.duration)
    return threads.split(pid, before, threads.read(pid), load["requests"])
