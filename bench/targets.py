"""The servers compared: the fake vendor itself, the gateway, LiteLLM's proxy and the raw relay.

Each target knows how to start itself against the fake vendor and how it is addressed (its
``Dialect``). They are started once per run and stay up while the rounds interleave.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from bench import processes
from bench.gateway_setup import CHAT_MODEL, CHAT_UPSTREAM_MODEL, MESSAGES_MODEL, MESSAGES_UPSTREAM_MODEL
from bench.processes import Server
from bench.scenarios import Dialect

REPO = Path(__file__).resolve().parent.parent
BENCH_DIR = Path(__file__).resolve().parent
LITELLM_VENV = BENCH_DIR / ".venv-litellm"
IMAGE_MODEL = "delta-3.1-flash-image"
IMAGE_UPSTREAM_MODEL = "gemini-3.1-flash-image-preview"
VENDOR_KEY = "bench-vendor-key"
UVICORN = ["-m", "uvicorn", "--host", "127.0.0.1", "--workers", "1", "--no-access-log", "--log-level",
           "warning", "--loop", "uvloop", "--http", "httptools", "--no-server-header"]
DEFAULT_REDIS = "redis://127.0.0.1:6379/0"

# The gateway's feature sets. "production": limits and budgets in Redis (a key with rate limits
# and two budgets, set high so they are checked on every call and never refuse), cost, metrics
# and JSON request logs. "bare": all of that off (cost is still computed: prices are seeded).
PRESETS: dict[str, dict[str, str]] = {
    "bare": {"REDIS_URL": "", "BENCH_SPEND_LIMITS": "0", "STUDIO_METRICS": "0", "STUDIO_REQUEST_LOG": "0"},
    "production": {"REDIS_URL": "{redis}", "BENCH_SPEND_LIMITS": "1", "STUDIO_METRICS": "1",
                   "STUDIO_REQUEST_LOG": "1"},
}


@dataclass
class Context:
    workdir: Path
    upstream_url: str
    gateway_env: dict[str, str]
    secret_key: str = field(default_factory=lambda: secrets.token_urlsafe(50))
    python: str = sys.executable
    preset: str = "bare"  # of the "gateway" target; "gateway_prod" is always "production"
    redis_url: str = DEFAULT_REDIS
    workers: int = 1
    server_cpus: str | None = None  # taskset list for the gateway (None: the server core)
    run_id: str = field(default_factory=lambda: secrets.token_hex(4))
    # Put before the Python of the gateway and the raw relay (``bench instructions``: callgrind).
    server_prefix: tuple[str, ...] = ()
    ready_timeout: float = 60.0  # seconds a server has to start listening


@dataclass
class GatewayOptions:
    """What every mode that starts the gateway takes: its preset and extra variables, the Redis
    of the production preset, the load's open connections, where the servers work (``bench.workdir``)
    and where the results go."""

    concurrency: int = 16
    preset: str = "bare"  # of the "gateway" target
    redis_url: str = DEFAULT_REDIS
    gateway_env: dict[str, str] = field(default_factory=dict)
    out_dir: Path = BENCH_DIR / "results"
    workdir: Path | None = None  # the parent of the run's folder (None: the system's temporary folder)

    def context(self, workdir: Path, upstream_url: str) -> Context:
        """The servers' context of a run of these options (``dataclasses.replace`` for more)."""
        return Context(workdir=workdir, upstream_url=upstream_url, gateway_env=self.gateway_env,
                       preset=self.preset, redis_url=self.redis_url)


def preset_environment(preset: str, ctx: Context) -> dict[str, str]:
    """The preset's variables; Redis keys of this run get a prefix of their own."""
    env = {name: value.replace("{redis}", ctx.redis_url) for name, value in PRESETS[preset].items()}
    if env.get("REDIS_URL"):
        env["STUDIO_COUNTER_PREFIX"] = f"bench:{ctx.run_id}:spend:"
        env["STUDIO_REDIS_PREFIX"] = f"bench:{ctx.run_id}"
    return env


@dataclass
class Running:
    server: Server
    dialect: Dialect


@dataclass(frozen=True)
class Target:
    name: str
    label: str
    start: Callable[[Context, Server], Running]


def vendor_dialect(key: str) -> Dialect:
    return Dialect(chat_model=CHAT_UPSTREAM_MODEL, image_model=IMAGE_UPSTREAM_MODEL, image_prefix="/v1beta",
                   image_key_header="x-goog-api-key", key=key, messages_model=MESSAGES_UPSTREAM_MODEL)


def start_direct(ctx: Context, upstream: Server) -> Running:
    """The fake vendor itself: the baseline every "added" number is measured against."""
    return Running(upstream, vendor_dialect(VENDOR_KEY))


def start_raw(ctx: Context, upstream: Server) -> Running:
    port = processes.free_port()
    server = processes.start(
        "raw", [*ctx.server_prefix, ctx.python, *UVICORN, "--port", str(port), "bench.raw_relay:app"], port=port,
        workdir=ctx.workdir, cwd=REPO, env={"BENCH_UPSTREAM": ctx.upstream_url}, ready_timeout=ctx.ready_timeout,
    )
    dialect = vendor_dialect(VENDOR_KEY)
    return Running(server, Dialect(dialect.chat_model, dialect.image_model, "/v1", "x-goog-api-key", VENDOR_KEY,
                                   messages_model=dialect.messages_model))


def gateway_environment(ctx: Context, preset: str | None = None, name: str = "gateway") -> dict[str, str]:
    home = ctx.workdir / name
    (home / "media").mkdir(parents=True, exist_ok=True)
    return {
        "DJANGO_SETTINGS_MODULE": "studio.settings",
        "DATABASE_URL": f"sqlite:///{home / 'db.sqlite3'}",
        "MEDIA_ROOT": str(home / "media"),
        "STATIC_ROOT": str(home / "static"),
        "STUDIO_INPROCESS_WORKER": "0",
        "STUDIO_LOG_LEVEL": "WARNING",
        "DEBUG": "false",
        "SECRET_KEY": ctx.secret_key,  # DEBUG off refuses the public development key
        "PYTHONPATH": str(REPO),
        **preset_environment(preset or ctx.preset, ctx),
        **ctx.gateway_env,
    }


def start_gateway(ctx: Context, upstream: Server, preset: str | None = None, name: str = "gateway") -> Running:
    env = gateway_environment(ctx, preset, name)
    setup = subprocess.run(
        [ctx.python, "-m", "bench.gateway_setup", "--upstream", ctx.upstream_url], cwd=REPO,
        env={**os.environ, **env}, capture_output=True, text=True, timeout=300, check=False,
    )
    if setup.returncode != 0:
        raise RuntimeError(f"gateway setup failed:\n{setup.stdout[-1500:]}\n{setup.stderr[-3000:]}")
    key = orjson.loads(setup.stdout.strip().splitlines()[-1])["key"]
    port = processes.free_port()
    uvicorn = [*UVICORN[:UVICORN.index("--workers") + 1], str(ctx.workers), *UVICORN[UVICORN.index("--workers") + 2:]]
    server = processes.start(
        name, [*ctx.server_prefix, ctx.python, *uvicorn, "--port", str(port), "--lifespan", "on",
               "studio.asgi:application"],
        port=port, workdir=ctx.workdir, cwd=REPO, env={**env, "PORT": str(port)},
        core=ctx.server_cpus if ctx.server_cpus is not None else processes.SERVER_CORE,
        ready_timeout=ctx.ready_timeout,
    )
    return Running(server, Dialect(chat_model=CHAT_MODEL, image_model=IMAGE_MODEL, image_prefix="/v1",
                                   image_key_header="x-delta-api-key", key=key, messages_model=MESSAGES_MODEL))


def start_gateway_production(ctx: Context, upstream: Server) -> Running:
    return start_gateway(ctx, upstream, preset="production", name="gateway_prod")


def litellm_binary() -> Path:
    return LITELLM_VENV / "bin" / "litellm"


def install_litellm(log: Callable[[str], None]) -> Path:
    """LiteLLM's proxy in its own virtual environment (its pins must not touch the project's)."""
    binary = litellm_binary()
    if binary.exists():
        return binary
    log(f"installing LiteLLM's proxy into {LITELLM_VENV} (once; this takes a few minutes)")
    subprocess.run([sys.executable, "-m", "venv", str(LITELLM_VENV)], check=True)
    subprocess.run([str(LITELLM_VENV / "bin" / "pip"), "install", "--quiet", "litellm[proxy]"], check=True,
                   timeout=1800)
    return binary


def start_litellm(ctx: Context, upstream: Server) -> Running:
    binary = litellm_binary()
    if not binary.exists():
        raise RuntimeError(f"LiteLLM is not installed at {binary}")
    config = ctx.workdir / "litellm.yaml"
    # It authenticates clients with a master key, as the gateway does with its keys.
    master_key = "sk-bench-" + secrets.token_hex(16)
    # JSON is YAML: two models at the fake vendor, as the gateway has them: an OpenAI one (chat
    # and responses) and an Anthropic one (messages).
    config.write_bytes(orjson.dumps({
        "model_list": [
            {"model_name": CHAT_MODEL, "litellm_params": {
                "model": f"openai/{CHAT_UPSTREAM_MODEL}", "api_base": f"{ctx.upstream_url}/v1", "api_key": VENDOR_KEY}},
            {"model_name": MESSAGES_MODEL, "litellm_params": {
                "model": f"anthropic/{MESSAGES_UPSTREAM_MODEL}", "api_base": ctx.upstream_url, "api_key": VENDOR_KEY}},
        ],
        "litellm_settings": {"telemetry": False, "drop_params": True},
        "general_settings": {"master_key": master_key},
    }))
    port = processes.free_port()
    server = processes.start(
        "litellm", [str(binary), "--config", str(config), "--host", "127.0.0.1", "--port", str(port),
                    "--num_workers", "1"],
        port=port, workdir=ctx.workdir, ready_timeout=180,
        env={"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR", "LITELLM_TELEMETRY": "False",
             "DISABLE_SCHEMA_UPDATE": "True"},
    )
    return Running(server, Dialect(chat_model=CHAT_MODEL, image_model=None, image_prefix="/v1",
                                   image_key_header="authorization", key=master_key, messages_model=MESSAGES_MODEL))


TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("direct", "direct to upstream", start_direct),
    Target("gateway", "this gateway (bare)", start_gateway),
    Target("gateway_prod", "this gateway, production features on", start_gateway_production),
    Target("litellm", "LiteLLM proxy", start_litellm),
    Target("raw", "raw floor (uvicorn + aiohttp)", start_raw),
)}
