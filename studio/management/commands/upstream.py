"""Operate vendor accounts from a shell: add, map models, unmap, list with health, test, disable.

The credential is read from an environment variable (``--credential-env``) or from stdin, never
from the command line (where it would land in shell history and process listings). Mapping a
model to a real upstream takes it off the sandbox; unmapping the last one gives it back.
"""

from __future__ import annotations

import asyncio
import getpass
import os
import sys
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import URLValidator
from django.utils import timezone

from studio.core.entries import UpstreamEntry
from studio.core.errors import GatewayError
from studio.gateway import health
from studio.models import PlatformModel, Upstream
from studio.providers.base import Provider
from studio.providers.registry import SANDBOX, vendor, vendors

VENDOR_PROTOCOLS = list(vendors())


class Command(BaseCommand):
    help = "Manage upstream vendor accounts: add, map, unmap, list, test, disable, enable."
    stealth_options = ("stdin",)

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

        add = actions.add_parser("add", help="Add a vendor account (credential from --credential-env or stdin).")
        add.add_argument("name")
        add.add_argument("--protocol", required=True, choices=VENDOR_PROTOCOLS)
        add.add_argument("--base-url", required=True, help="e.g. https://api.openai.com/v1")
        add.add_argument("--credential-env", metavar="VAR", help="Read the credential from this environment variable.")
        add.add_argument("--priority", type=int, default=0, help="Higher tiers are tried first.")
        add.add_argument("--weight", type=int, default=1, help="Share of traffic within a tier.")
        add.add_argument("--timeout", type=float, help="Read timeout in seconds (default: STUDIO_UPSTREAM_TIMEOUT).")

        mapping = actions.add_parser("map", help="Serve a platform model through the upstream.")
        mapping.add_argument("name")
        mapping.add_argument("model", help="The platform model id clients send.")
        mapping.add_argument("--upstream-model", help="The vendor's name for it (default: the same id).")
        mapping.add_argument("--priority", type=int, help="Set the upstream's priority tier.")
        mapping.add_argument("--weight", type=int, help="Set the upstream's weight within its tier.")

        unmap = actions.add_parser("unmap", help="Stop serving a platform model through the upstream.")
        unmap.add_argument("name")
        unmap.add_argument("model")

        actions.add_parser("list", help="Every upstream with its models and health.")
        for action, text in (("test", "Make a cheap real call through the upstream."),
                             ("disable", "Stop routing to the upstream."), ("enable", "Route to it again.")):
            actions.add_parser(action, help=text).add_argument("name")

    def handle(self, *args: Any, **options: Any) -> None:
        actions = {"add": self.do_add, "map": self.do_map, "unmap": self.do_unmap, "list": self.do_list,
                   "test": self.do_test, "disable": self.do_disable, "enable": self.do_enable}
        actions[options["action"]](options)

    # -- actions ---------------------------------------------------------------------------------
    def do_add(self, options: dict[str, Any]) -> None:
        name = options["name"]
        if Upstream.objects.filter(name=name).exists():
            raise CommandError(f"an upstream named {name!r} exists already")
        try:
            URLValidator(schemes=["http", "https"])(options["base_url"])
        except ValidationError:
            raise CommandError(f"--base-url: {options['base_url']!r} is not an http(s) URL") from None
        if options["weight"] < 1:
            raise CommandError("--weight: must be at least 1")
        upstream = Upstream(name=name, protocol=options["protocol"], base_url=options["base_url"].rstrip("/"),
                            priority=options["priority"], weight=options["weight"], timeout=options["timeout"])
        upstream.credential = self.read_credential(options)
        upstream.save()
        self.stdout.write(f"Added upstream {name!r} ({upstream.protocol}, {upstream.base_url}). "
                          f"Map models to it with: manage.py upstream map {name} MODEL")

    def read_credential(self, options: dict[str, Any]) -> str:
        variable = options.get("credential_env")
        if variable:
            value = os.environ.get(variable, "").strip()
            if not value:
                raise CommandError(f"--credential-env: the environment variable {variable} is not set or empty")
            return value
        stdin = options.get("stdin") or sys.stdin
        if stdin.isatty():
            value = getpass.getpass("Credential (input hidden): ").strip()
        else:
            value = stdin.readline().strip()
        if not value:
            raise CommandError("no credential given: pipe it on stdin or name a variable with --credential-env")
        return value

    def do_map(self, options: dict[str, Any]) -> None:
        upstream = self.upstream(options["name"])
        model_id = options["model"]
        if not PlatformModel.objects.filter(model_id=model_id).exists():
            raise CommandError(f"no platform model {model_id!r} (see /admin/ or seed_demo)")
        upstream.model_map = {**(upstream.model_map or {}), model_id: options["upstream_model"] or model_id}
        if options["priority"] is not None:
            upstream.priority = options["priority"]
        if options["weight"] is not None:
            if options["weight"] < 1:
                raise CommandError("--weight: must be at least 1")
            upstream.weight = options["weight"]
        upstream.save()
        note = "" if upstream.protocol == SANDBOX else " (the sandbox no longer serves it)"
        self.stdout.write(f"{model_id} → {upstream.name} as {upstream.model_map[model_id]!r}{note}.")

    def do_unmap(self, options: dict[str, Any]) -> None:
        upstream = self.upstream(options["name"])
        model_map = dict(upstream.model_map or {})
        if model_map.pop(options["model"], None) is None:
            raise CommandError(f"{options['model']!r} is not mapped to {upstream.name!r}")
        upstream.model_map = model_map
        upstream.save()
        self.stdout.write(f"{options['model']} is no longer served by {upstream.name}.")

    def do_list(self, options: dict[str, Any]) -> None:
        rows = list(Upstream.objects.order_by("-priority", "name"))
        if not rows:
            self.stdout.write("No upstreams. Add one with: manage.py upstream add NAME --protocol P --base-url URL")
            return
        now = timezone.now()
        for up in rows:
            state = "enabled" if up.enabled else "DISABLED"
            breaker = "open" if up.breaker_open_until and up.breaker_open_until > now else "closed"
            self.stdout.write(f"{up.name}  [{up.protocol}] {up.base_url}  {state}  priority={up.priority} "
                              f"weight={up.weight}")
            self.stdout.write(f"  health: consecutive_failures={up.consecutive_failures} breaker={breaker} "
                              f"last_success={_when(up.last_success_at)} last_error_at={_when(up.last_error_at)}")
            if up.last_error:
                self.stdout.write(f"  last error: {up.last_error[:200]}")
            models = ", ".join(f"{m}→{u}" if m != u else m for m, u in sorted((up.model_map or {}).items()))
            self.stdout.write(f"  models: {models or '(none)'}")

    def do_test(self, options: dict[str, Any]) -> None:
        upstream = self.upstream(options["name"])
        if upstream.protocol == SANDBOX:
            self.stdout.write(f"{upstream.name} is the built-in sandbox: nothing to reach.")
            return
        entry = UpstreamEntry(id=upstream.id, name=upstream.name, protocol=upstream.protocol,
                              base_url=upstream.base_url.rstrip("/"), credential=upstream.credential,
                              priority=upstream.priority, weight=upstream.weight, timeout=upstream.timeout or 30.0,
                              model_map=dict(upstream.model_map or {}))
        try:
            status, url = asyncio.run(_check(entry))
        except GatewayError as exc:
            outcome = health.Outcomes(failures_after_success=1, last_error=f"{type(exc).__name__}: {exc.message}",
                                      error_at=timezone.now())
            health.write_rows({upstream.id: outcome}, {})
            raise CommandError(f"FAILED: {upstream.name} ({upstream.base_url}): "
                               f"{type(exc).__name__}: {exc.message}") from None
        health.write_rows({upstream.id: health.Outcomes(succeeded=True, success_at=timezone.now())}, {})
        self.stdout.write(f"OK: {upstream.name} answered HTTP {status} to GET {url}")

    def do_disable(self, options: dict[str, Any]) -> None:
        self.set_enabled(options["name"], False)

    def do_enable(self, options: dict[str, Any]) -> None:
        self.set_enabled(options["name"], True)

    # -- helpers ---------------------------------------------------------------------------------
    def set_enabled(self, name: str, enabled: bool) -> None:
        upstream = self.upstream(name)
        upstream.enabled = enabled
        upstream.save(update_fields=["enabled"])
        if enabled:
            self.stdout.write(f"{name} is enabled.")
        else:
            self.stdout.write(f"{name} is disabled: requests for its models fail over to its other upstreams "
                              "(never to the sandbox); `upstream unmap` gives a model back to the sandbox.")

    def upstream(self, name: str) -> Upstream:
        upstream = Upstream.objects.filter(name=name).first()
        if upstream is None:
            raise CommandError(f"no upstream named {name!r} (see: manage.py upstream list)")
        return upstream


async def _check(entry: UpstreamEntry) -> tuple[int, str]:
    """The check call's status and URL (the provider's client belongs to this event loop)."""
    from studio.providers.http import close_client

    provider: Provider = vendor(entry.protocol).provider(entry)
    try:
        return await provider.check(), provider.url(provider.check_path())
    finally:
        await close_client()


def _when(moment: Any) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S") if moment else "never"
