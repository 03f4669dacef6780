"""Production settings: a DEBUG-off start with the public development key is refused; the
documented production environment (compose.yaml's) passes ``manage.py check --deploy`` clean; a
local install with no environment still runs (in development mode)."""

from __future__ import annotations

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
