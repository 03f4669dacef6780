"""``manage.py upstream``: connect a vendor account, map and unmap models, list health, test, disable."""

from __future__ import annotations

import io

import httpx
import pytest
from django.core.management import CommandError, call_command

from studio.providers import http
from tests.providers.video_fakes import FakeVendor

pytestmark = pytest.mark.django_db(transaction=True)
BASE = "https://vendor.test/v1"


def run(*args: str, stdin: str | None = None) -> str:
    out = io.StringIO()
    options = {"stdout": out}
    if stdin is not None:
        options["stdin"] = io.StringIO(stdin)
    call_command("upstream", *args, **options)
    return out.getvalue()


def block(listing: str, name: str) -> str:
    """One upstream's lines of ``upstream list``."""
    lines, inside = [], False
    for line in listing.splitlines():
        if not line.startswith(" "):
            inside = line.startswith(name + "  [")
        if inside:
            lines.append(line)
    return "\n".join(lines)


@pytest.fixture
def vendor():
    fake = FakeVendor({("GET", "/v1/models"): (200, {"object": "list", "data": [{"id": "gpt-x"}]})})
    http.mount("https://vendor.test", httpx.ASGITransport(app=fake))
    yield fake
    http.unmount("https://vendor.test")


def test_add_reads_the_credential_from_a_variable_never_the_command_line(catalog, monkeypatch):
    from studio.models import Upstream

    monkeypatch.setenv("VENDOR_KEY", "sk-from-env")
    out = run("add", "acme", "--protocol", "openai", "--base-url", BASE, "--credential-env", "VENDOR_KEY")
    row = Upstream.objects.get(name="acme")
    assert row.protocol == "openai" and row.base_url == BASE and row.credential == "sk-from-env"
    assert "sk-from-env" not in row.credential_encrypted and "sk-from-env" not in out


def test_add_reads_the_credential_from_stdin(catalog):
    from studio.models import Upstream

    run("add", "acme", "--protocol", "anthropic", "--base-url", "https://api.anthropic.test", stdin="sk-piped\n")
    assert Upstream.objects.get(name="acme").credential == "sk-piped"


@pytest.mark.parametrize("args, stdin, message", [
    (["--base-url", BASE, "--credential-env", "UNSET_VARIABLE_X"], None, "UNSET_VARIABLE_X"),
    (["--base-url", BASE], "", "no credential"),
    (["--base-url", "ftp://x"], "k", "--base-url"),
])
def test_add_refuses_bad_input_naming_it(catalog, args, stdin, message):
    with pytest.raises(CommandError, match=message):
        run("add", "acme", "--protocol", "openai", *args, stdin=stdin)


def test_map_takes_the_model_off_the_sandbox_and_unmap_gives_it_back(catalog, monkeypatch):
    from studio.gateway import snapshot

    monkeypatch.setenv("VENDOR_KEY", "k")
    run("add", "acme", "--protocol", "openai", "--base-url", BASE, "--credential-env", "VENDOR_KEY")
    assert [u.name for u in snapshot.load().upstreams_for["omicron-4-mini"]] == ["Sandbox"]
    out = run("map", "acme", "omicron-4-mini", "--upstream-model", "gpt-x", "--priority", "5", "--weight", "3")
    assert "no longer serves" in out
    served = snapshot.load().upstreams_for["omicron-4-mini"]
    assert [(u.name, u.priority, u.weight, u.model_map["omicron-4-mini"]) for u in served] == [("acme", 5, 3, "gpt-x")]
    run("unmap", "acme", "omicron-4-mini")
    assert [u.name for u in snapshot.load().upstreams_for["omicron-4-mini"]] == ["Sandbox"]


def test_map_refuses_an_unknown_model_or_upstream(catalog, monkeypatch):
    monkeypatch.setenv("VENDOR_KEY", "k")
    run("add", "acme", "--protocol", "openai", "--base-url", BASE, "--credential-env", "VENDOR_KEY")
    with pytest.raises(CommandError, match="no platform model"):
        run("map", "acme", "no-such-model")
    with pytest.raises(CommandError, match="no upstream named"):
        run("map", "nobody", "omicron-4-mini")


def test_test_reports_success_and_failure_and_list_shows_health(catalog, monkeypatch, vendor):
    monkeypatch.setenv("VENDOR_KEY", "sk-good")
    run("add", "acme", "--protocol", "openai", "--base-url", BASE, "--credential-env", "VENDOR_KEY")
    out = run("test", "acme")
    assert out.startswith("OK: acme answered HTTP 200") and "/v1/models" in out
    assert vendor.requests[-1]["headers"]["authorization"] == "Bearer sk-good"
    listing = block(run("list"), "acme")
    assert "consecutive_failures=0" in listing and "last_success=never" not in listing

    vendor.replies[("GET", "/v1/models")] = (401, {"error": {"message": "Incorrect API key", "type": "auth"}})
    with pytest.raises(CommandError, match="FAILED: acme.*Incorrect API key"):
        run("test", "acme")
    listing = block(run("list"), "acme")
    assert "consecutive_failures=1" in listing and "Incorrect API key" in listing


def test_disable_stops_routing_without_falling_back_to_the_sandbox(catalog, monkeypatch):
    from studio.gateway import snapshot

    monkeypatch.setenv("VENDOR_KEY", "k")
    run("add", "acme", "--protocol", "openai", "--base-url", BASE, "--credential-env", "VENDOR_KEY")
    run("map", "acme", "omicron-4-mini")
    out = run("disable", "acme")
    assert "disabled" in out
    assert "omicron-4-mini" not in snapshot.load().upstreams_for
    assert "DISABLED" in block(run("list"), "acme")
    run("enable", "acme")
    assert [u.name for u in snapshot.load().upstreams_for["omicron-4-mini"]] == ["acme"]
