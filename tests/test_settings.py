"""Production settings: a DEBUG-off start with the public development key is refused; the
documented production environment (compose.yaml's) passes ``manage.py check --deploy`` clean; a
local install with no environment still runs (in development mode); the knobs other modules read
come from the environment once, with their documented defaults."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import yaml
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[1]
KEPT = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "VIRTUAL_ENV")


def run(args: list[str], env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k in KEPT}
    base.update({"DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "STATIC_ROOT": str(tmp_path / "static"),
                 "MEDIA_ROOT": str(tmp_path / "media")})
    return subprocess.run([sys.executable, *args], cwd=ROOT, env={**base, **env}, capture_output=True, text=True,
                          timeout=120)


def production_environment(tmp_path: Path) -> dict[str, str]:
    """compose.yaml's environment of the studio services, its required secrets filled in."""
    filled = {"SECRET_KEY": secrets.token_urlsafe(50), "STUDIO_CREDENTIAL_KEYS": Fernet.generate_key().decode(),
              "S3_SECRET_KEY": secrets.token_urlsafe(12)}
    raw = yaml.safe_load((ROOT / "compose.yaml").read_text())["x-studio-env"]

    def one(match: re.Match) -> str:
        name, operator, argument = match.groups()
        return filled.get(name, argument if operator == ":-" else "")

    def substitute(value: str) -> str:
        return re.sub(r"\$\{(\w+)(:[-?])?([^}]*)\}", one, value)

    env = {name: substitute(str(value)) for name, value in raw.items()}
    env["PROMETHEUS_MULTIPROC_DIR"] = str(tmp_path / "prometheus")
    return env


def test_the_documented_production_environment_passes_check_deploy_without_a_warning(tmp_path):
    env = production_environment(tmp_path)
    assert env["DEBUG"] == "0" and len(env["SECRET_KEY"]) >= 50
    result = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], env, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_without_the_production_settings_check_deploy_names_what_is_missing(tmp_path):
    result = run(["manage.py", "check", "--deploy"], {"SECRET_KEY": secrets.token_urlsafe(50), "DEBUG": "0"}, tmp_path)
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in result.stderr + result.stdout


def test_debug_off_with_the_public_development_key_refuses_to_start(tmp_path):
    result = run(["manage.py", "check"], {"DEBUG": "0"}, tmp_path)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and "SECRET_KEY is not set" in result.stderr


def test_a_local_install_without_any_environment_runs_in_development_mode(tmp_path):
    result = run(["-c", "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'studio.settings'; "
                        "django.setup(); from django.conf import settings; print(settings.DEBUG)"], {}, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"
    assert run(["manage.py", "check"], {}, tmp_path).returncode == 0


def test_a_secret_key_alone_means_debug_off(tmp_path):
    result = run(["-c", "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'studio.settings'; "
                        "django.setup(); from django.conf import settings; print(settings.DEBUG)"],
                 {"SECRET_KEY": secrets.token_urlsafe(50)}, tmp_path)
    assert result.stdout.strip() == "False", result.stderr


# Knobs read once from the environment into settings, which the sandbox, the video engine and the
# metrics read; their defaults.
KNOBS = {
    "STUDIO_SANDBOX_DELAY": 0.15, "STUDIO_SANDBOX_VIDEO_SECONDS": 4.0, "STUDIO_SANDBOX_RENDER_LEASE": 30.0,
    "STUDIO_VIDEO_FIRST_POLL": 2.0, "STUDIO_VIDEO_POLL_SCALE": 1.0, "STUDIO_VIDEO_MAX_TASK_AGE": 259200.0,
    "STUDIO_VIDEO_NOT_FOUND_GRACE": 120.0, "STUDIO_VIDEO_LEASE_SECONDS": 60.0, "STUDIO_VIDEO_CALLBACKS": True,
    "STUDIO_VIDEO_MIRROR_MAX_BYTES": 536870912, "STUDIO_VIDEO_MIRROR_TIMEOUT": 120.0,
    "STUDIO_VIDEO_WEBHOOK_BACKOFF": 1.0, "PROMETHEUS_MULTIPROC_DIR": "",
}


def settings_seen(env: dict[str, str], tmp_path: Path) -> dict:
    code = ("import json, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'studio.settings'; "
            "from django.conf import settings; "
            f"print(json.dumps({{name: getattr(settings, name) for name in {list(KNOBS)!r}}}))")
    result = run(["-c", code], env, tmp_path)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_without_environment_the_knobs_have_their_documented_defaults(tmp_path):
    assert settings_seen({}, tmp_path) == KNOBS


def test_the_knobs_come_from_the_environment(tmp_path):
    folder = tmp_path / "prometheus"
    env = {"STUDIO_SANDBOX_DELAY": "0.5", "STUDIO_SANDBOX_VIDEO_SECONDS": "0", "STUDIO_SANDBOX_RENDER_LEASE": "3",
           "STUDIO_VIDEO_FIRST_POLL": "0.5", "STUDIO_VIDEO_POLL_SCALE": "0.25", "STUDIO_VIDEO_MAX_TASK_AGE": "3600",
           "STUDIO_VIDEO_NOT_FOUND_GRACE": "7", "STUDIO_VIDEO_LEASE_SECONDS": "3", "STUDIO_VIDEO_CALLBACKS": "off",
           "STUDIO_VIDEO_MIRROR_MAX_BYTES": "1000", "STUDIO_VIDEO_MIRROR_TIMEOUT": "9",
           "STUDIO_VIDEO_WEBHOOK_BACKOFF": "0", "PROMETHEUS_MULTIPROC_DIR": str(folder)}
    assert settings_seen(env, tmp_path) == {
        "STUDIO_SANDBOX_DELAY": 0.5, "STUDIO_SANDBOX_VIDEO_SECONDS": 0.0, "STUDIO_SANDBOX_RENDER_LEASE": 3.0,
        "STUDIO_VIDEO_FIRST_POLL": 0.5, "STUDIO_VIDEO_POLL_SCALE": 0.25, "STUDIO_VIDEO_MAX_TASK_AGE": 3600.0,
        "STUDIO_VIDEO_NOT_FOUND_GRACE": 7.0, "STUDIO_VIDEO_LEASE_SECONDS": 3.0, "STUDIO_VIDEO_CALLBACKS": False,
        "STUDIO_VIDEO_MIRROR_MAX_BYTES": 1000, "STUDIO_VIDEO_MIRROR_TIMEOUT": 9.0,
        "STUDIO_VIDEO_WEBHOOK_BACKOFF": 0.0, "PROMETHEUS_MULTIPROC_DIR": str(folder),
    }
    assert folder.is_dir()  # made for prometheus-client, which writes there from the first metric


def test_an_empty_video_knob_means_its_default_and_callbacks_take_the_usual_words(tmp_path):
    seen = settings_seen({"STUDIO_VIDEO_FIRST_POLL": "", "STUDIO_VIDEO_CALLBACKS": " ON "}, tmp_path)
    assert seen["STUDIO_VIDEO_FIRST_POLL"] == 2.0 and seen["STUDIO_VIDEO_CALLBACKS"] is True
    for raw in ("0", "no", "false"):
        assert settings_seen({"STUDIO_VIDEO_CALLBACKS": raw}, tmp_path)["STUDIO_VIDEO_CALLBACKS"] is False


def test_the_periodic_work_of_the_production_features_follows_its_knobs(tmp_path):
    """How long a counter lease serves, how long request log lines gather and how often request
    counts reach the metrics: each from its variable, in the part it times."""
    code = ("import json, os, logging; os.environ['DJANGO_SETTINGS_MODULE'] = 'studio.settings'; "
            "import django; django.setup(); "
            "from studio.gateway import metrics; from studio.gateway.redis_counters import RedisCounters; "
            "handler = logging.getLogger('studio.requests').handlers[0]; "
            "store = RedisCounters('redis://127.0.0.1:1/0', 'p:'); "
            "print(json.dumps([store._leases.seconds, handler.delay, metrics.TALLY.interval]))")
    defaults = run(["-c", code], {}, tmp_path)
    assert defaults.returncode == 0, defaults.stderr
    assert json.loads(defaults.stdout) == [1.0, 0.05, 1.0]
    chosen = run(["-c", code], {"STUDIO_COUNTER_LEASE_SECONDS": "60", "STUDIO_REQUEST_LOG_BATCH_SECONDS": "3",
                                "STUDIO_METRICS_INTERVAL": "30"}, tmp_path)
    assert chosen.returncode == 0, chosen.stderr
    assert json.loads(chosen.stdout) == [60.0, 3.0, 30.0]


def test_a_metrics_interval_of_zero_is_refused_at_start(tmp_path):
    code = "import os; os.environ['DJANGO_SETTINGS_MODULE'] = 'studio.settings'; import django; django.setup()"
    refused = run(["-c", code], {"STUDIO_METRICS_INTERVAL": "0"}, tmp_path)
    assert refused.returncode != 0 and "STUDIO_METRICS_INTERVAL is a number of seconds above 0" in refused.stderr
