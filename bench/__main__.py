"""``python -m bench run``: the whole comparison in one command (see the README's "Benchmarks").

``python -m bench soak``: the gateway's RSS over many requests (is memory flat?), see ``bench/soak.py``.

``python -m bench scale``: the gateway with 1 and 2 worker processes sharing Redis, see ``bench/scale.py``.

``python -m bench profile``: py-spy flame graphs of the gateway per scenario, see ``bench/profile.py``.

``python -m bench instructions``: instructions per request of the gateway and the raw relay under
callgrind, the steady reading of the CPU ratio on a noisy machine, see ``bench/instructions.py``.

``--gateway-env`` takes ``NAME=VALUE`` or a preset: ``bare`` (the default: no Redis, no limits,
no metrics, no request logs) or ``production`` (all of them on). ``run`` measures both: the
"gateway" target with the chosen preset and "gateway_prod" with "production".

Installs the benchmark's own requirements (``bench/requirements.txt``) into the running
interpreter when they are missing, and LiteLLM's proxy into ``bench/.venv-litellm``.
"""

from __future__ import annotations

import argparse
import importlib.util
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

BENCH_DIR = Path(__file__).resolve().parent
ModeOptions = TypeVar("ModeOptions")


def ensure_requirements() -> None:
    missing = [name for name in ("psutil", "matplotlib", "aiohttp") if importlib.util.find_spec(name) is None]
    if missing:
        print(f"installing the benchmark's requirements ({', '.join(missing)})", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "-r", str(BENCH_DIR / "requirements.txt")],
                       check=True)


def csv(choices: list[str]):
    def parse(text: str) -> list[str]:
        values = [v.strip() for v in text.split(",") if v.strip()]
        unknown = sorted(set(values) - set(choices))
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown {unknown}; choose from {', '.join(choices)}")
        return values
    return parse


def env_pair(text: str) -> tuple[str, str]:
    """``NAME=VALUE``, or a preset's name as ``("", name)``."""
    from bench.targets import PRESETS

    if text in PRESETS:
        return "", text
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE or one of {', '.join(PRESETS)}, not {text!r}")
    return name, value


def gateway_fields(args: argparse.Namespace, default: str = "bare") -> dict:
    """The fields of ``GatewayOptions`` from a mode's command line (``--gateway-env``'s preset
    and variables, ``--redis-url``, ``--concurrency``, ``--workdir`` and ``--out``)."""
    preset, extra = split_env(args.gateway_env, default=default)
    return {"concurrency": args.concurrency, "preset": preset, "redis_url": args.redis_url, "gateway_env": extra,
            "out_dir": args.out, "workdir": args.workdir}


def split_env(pairs: list[tuple[str, str]], default: str = "bare") -> tuple[str, dict[str, str]]:
    """(preset, extra variables) of the ``--gateway-env`` options."""
    preset = default
    extra = {}
    for name, value in pairs:
        if name:
            extra[name] = value
        else:
            preset = value
    return preset, extra


def add_gateway_options(command: argparse.ArgumentParser) -> None:
    import os

    from bench.targets import DEFAULT_REDIS

    command.add_argument("--gateway-env", type=env_pair, action="append", default=[], metavar="NAME=VALUE|PRESET",
                         help="a preset (bare, production) or an extra variable of the gateway, "
                              "e.g. STUDIO_UPSTREAM_TRANSPORT=aiohttp")
    command.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", DEFAULT_REDIS),
                         help="Redis of the production preset ($BENCH_REDIS_URL, else %(default)s); "
                              "the run's keys get a prefix of their own")
    command.add_argument("--workdir", type=Path, default=None,
                         help="where the servers' folder (their logs, the gateway's media) is made; the "
                              "system's temporary folder by default. The results report it with what "
                              "creating a file there costs, which the gateway pays per stored picture")


def parser() -> argparse.ArgumentParser:
    from bench.scenarios import SCENARIOS, TEXT_SCENARIOS
    from bench.targets import TARGETS

    main = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    commands = main.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the comparison and write bench/results/bench-*.json and .png")
    run.add_argument("--duration", type=float, default=8.0, help="seconds of load per scenario and target (8)")
    run.add_argument("--concurrency", type=int, default=16, help="open connections of the load generator (16)")
    run.add_argument("--rounds", type=int, default=3, help="interleaved rounds; cells are medians, ratios the median of each round's own (3)")
    run.add_argument("--slices", type=positive, default=4,
                     help="turns a round's load of a scenario takes on each target, the targets alternating; "
                          "each at least 2 s, the 4K frame's load in one (4)")
    run.add_argument("--targets", type=csv(list(TARGETS)), default=list(TARGETS),
                     help=f"comma-separated, from {','.join(TARGETS)}")
    run.add_argument("--scenarios", type=csv(list(SCENARIOS)), default=list(SCENARIOS),
                     help=f"comma-separated, from {','.join(SCENARIOS)}")
    run.add_argument("--quick", action="store_true", help="2 s per run, 1 round, short probes: a check, not a result")
    run.add_argument("--loadgen", choices=["auto", "wrk", "python"], default="auto",
                     help="wrk when installed, else the Python generator (auto)")
    run.add_argument("--probe-requests", type=int, default=200, help="sequential requests of a TTFB probe (200)")
    run.add_argument("--no-install", action="store_true", help="do not install LiteLLM when it is missing")
    add_gateway_options(run)
    run.add_argument("--out", type=Path, default=BENCH_DIR / "results", help="where the JSON and PNG go")

    soak = commands.add_parser("soak", help="the gateway's RSS over many requests: bench/results/soak-*.json, .png")
    soak.add_argument("--requests", type=positive, default=100_000, help="requests after the warm-up (100000)")
    soak.add_argument("--concurrency", type=positive, default=16, help="open connections (16)")
    soak.add_argument("--scenario", choices=list(SCENARIOS), default="chat", help="what is asked (chat)")
    soak.add_argument("--samples", type=positive, default=20, help="chunks, one RSS reading after each (20)")
    soak.add_argument("--warmup", type=int, default=2_000, help="requests before the baseline RSS (2000)")
    soak.add_argument("--tolerance", type=float, default=10.0, help="allowed final drift, percent (10)")
    soak.add_argument("--max-seconds", type=positive, default=1800, help="time budget of the load (1800)")
    add_gateway_options(soak)
    soak.add_argument("--out", type=Path, default=BENCH_DIR / "results", help="where the JSON and PNG go")

    scale = commands.add_parser("scale", help="1 and 2 gateway workers sharing Redis: bench/results/scale-*.json")
    scale.add_argument("--duration", type=float, default=8.0, help="seconds of load per scenario and count (8)")
    scale.add_argument("--concurrency", type=positive, default=16, help="open connections (16)")
    scale.add_argument("--rounds", type=positive, default=1, help="rounds per cell; cells are medians (1)")
    scale.add_argument("--workers", type=csv(["1", "2", "3", "4"]), default=["1", "2"],
                       help="worker counts, comma-separated (1,2)")
    scale.add_argument("--scenarios", type=csv(list(SCENARIOS)), default=["chat", "chat_stream"],
                       help=f"comma-separated, from {','.join(SCENARIOS)} (chat,chat_stream)")
    scale.add_argument("--server-cpus", default=None,
                       help="taskset CPU list of the gateway (default: the one server core)")
    scale.add_argument("--loadgen", choices=["auto", "wrk", "python"], default="auto")
    add_gateway_options(scale)
    scale.add_argument("--out", type=Path, default=BENCH_DIR / "results", help="where the JSON goes")

    profile = commands.add_parser("profile", help="py-spy flame graphs of the gateway per scenario (SVG files) and its CPU by thread")
    profile.add_argument("--duration", type=float, default=8.0, help="seconds of load per scenario (8)")
    profile.add_argument("--concurrency", type=positive, default=16, help="open connections (16)")
    profile.add_argument("--scenarios", type=csv(list(SCENARIOS)), default=list(SCENARIOS),
                         help=f"comma-separated, from {','.join(SCENARIOS)}")
    profile.add_argument("--format", choices=["flamegraph", "raw"], default="flamegraph",
                         help="SVG flame graphs, or collapsed stacks as text (raw)")
    profile.add_argument("--paused", action="store_true",
                         help="pause the gateway for each sample: every stack whole, on a busy machine too "
                              "(the gateway runs slower meanwhile; read shares, not rates; samples gather at "
                              "system calls far beyond their share of the time)")
    profile.add_argument("--no-raw", dest="raw", action="store_false",
                         help="skip the raw relay's CPU by thread under the same load, printed beside the gateway's")
    add_gateway_options(profile)
    profile.add_argument("--out", type=Path, default=BENCH_DIR / "results", help="where the SVG files go")

    counted = commands.add_parser(
        "instructions", help="instructions per request, gateway and raw relay, under callgrind: "
                             "bench/results/instructions-*.json")
    counted.add_argument("--requests", type=positive, default=300, help="requests counted per scenario (300)")
    counted.add_argument("--warmup", type=positive, default=40, help="requests before the counters start (40)")
    counted.add_argument("--concurrency", type=positive, default=16, help="open connections (16)")
    counted.add_argument("--scenarios", type=csv(list(SCENARIOS)), default=TEXT_SCENARIOS,
                         help=f"comma-separated, from {','.join(SCENARIOS)} ({','.join(TEXT_SCENARIOS)})")
    counted.add_argument("--production", action="store_true",
                         help="count the production preset's gateway too and report what its features add")
    counted.add_argument("--features", action="store_true",
                         help="with --production's count, count the production gateway without each of its "
                              "features (limits and budgets, metrics, request log) and report what each adds")
    add_gateway_options(counted)
    counted.add_argument("--out", type=Path, default=BENCH_DIR / "results", help="where the JSON goes")
    return main


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def soak_options(args: argparse.Namespace):
    from bench.soak import Options

    return Options(requests=args.requests, scenario=args.scenario, samples=args.samples,
                   warmup=max(args.warmup, 0), tolerance_pct=args.tolerance, max_seconds=args.max_seconds,
                   **gateway_fields(args))


def scale_options(args: argparse.Namespace):
    from bench.scale import Options

    return Options(duration=args.duration, rounds=args.rounds, workers=[int(w) for w in args.workers],
                   scenarios=args.scenarios, server_cpus=args.server_cpus, loadgen=args.loadgen,
                   **gateway_fields(args, default="production"))


def interruptible(mode: str, run: Callable[[ModeOptions], dict], options: ModeOptions) -> dict:
    """``run(options)``: each mode stops every process it started on any exit, Ctrl-C included."""
    try:
        return run(options)
    except KeyboardInterrupt:
        raise SystemExit(f"{mode} interrupted; every process it started is stopped") from None


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    ensure_requirements()
    from bench import processes, report, runner

    # The orchestrator itself stays off the servers' core.
    if processes.pin_prefix(processes.LOAD_CORE):
        import os

        os.sched_setaffinity(0, {processes.LOAD_CORE})
    # A plain SIGTERM would skip the clean-up; as SystemExit it stops every server on the way out.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    if args.command == "profile":
        from bench import profile

        written, by_thread = profile.run(profile.Options(duration=args.duration, scenarios=args.scenarios,
                                                         format=args.format, paused=args.paused,
                                                         raw=args.raw, **gateway_fields(args)))
        print(f"the worker's CPU by thread, per call:\n{by_thread}\n")
        print("written:\n" + "\n".join(f"  {path}" for path in written))
        return
    if args.command == "instructions":
        from bench import instructions

        counted = instructions.Options(requests=args.requests, warmup=args.warmup, scenarios=args.scenarios,
                                       production=args.production, features=args.features,
                                       **gateway_fields(args))
        doc = interruptible("instructions", instructions.run, counted)
        print(instructions.table(doc))
        print(f"\nwritten: {report.write_json(doc, counted.out_dir, 'instructions')}")
        return
    if args.command == "scale":
        from bench import scale

        options = scale_options(args)
        doc = interruptible("scale", scale.run, options)
        print(scale.table(doc))
        print(f"\nwritten: {report.write_json(doc, options.out_dir, 'scale')}")
        return
    if args.command == "soak":
        from bench import soak

        options = soak_options(args)
        doc = interruptible("soak", soak.run, options)
        print(soak.table(doc))
        json_path, png_path = soak.write(doc, options.out_dir)
        print(f"\nwritten: {json_path}" + (f"\n         {png_path}" if png_path else ""))
        return
    options = runner.Options(
        duration=2.0 if args.quick else args.duration, rounds=1 if args.quick else args.rounds,
        targets=args.targets, scenarios=args.scenarios,
        probe_requests=min(args.probe_requests, 40) if args.quick else args.probe_requests,
        loadgen=args.loadgen, install_litellm=not args.no_install, slices=args.slices, **gateway_fields(args),
    )
    outcome = runner.run(options)
    rows = report.summarize(outcome)
    print(report.table(rows, outcome))
    json_path, png_path = report.write(outcome, rows)
    print(f"\nwritten: {json_path}\n         {png_path}")


if __name__ == "__main__":
    main()
