"""Seed the demo catalog routed to the sandbox, an admin user and a demo API key (idempotent)."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from studio.catalog_data import DEMO_MODELS, SANDBOX_UPSTREAM
from studio.gateway import price_table
from studio.models import ApiKey, PlatformModel, Price, Upstream
from studio.price_data import DEMO_PRICES

DEMO_KEY_NAME = "demo key"


class Command(BaseCommand):
    help = "Create or update the demo catalog, the sandbox upstream, the admin user and a demo key."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--admin", default="admin", help="Username of the admin user.")
        parser.add_argument("--no-key", action="store_true", help="Do not (re)issue the demo API key.")

    @transaction.atomic
    def handle(self, *args, **options) -> None:
        model_map = {}
        for spec in DEMO_MODELS:
            defaults = {k: v for k, v in spec.items() if k not in ("model_id", "upstream_model")}
            PlatformModel.objects.update_or_create(model_id=spec["model_id"], defaults=defaults)
            model_map[spec["model_id"]] = spec["upstream_model"]
        sandbox, created = Upstream.objects.get_or_create(
            name=SANDBOX_UPSTREAM["name"],
            defaults={"protocol": SANDBOX_UPSTREAM["protocol"], "base_url": settings.STUDIO_SANDBOX_BASE_URL},
        )
        sandbox.protocol = SANDBOX_UPSTREAM["protocol"]
        sandbox.base_url = settings.STUDIO_SANDBOX_BASE_URL
        sandbox.model_map = {**sandbox.model_map, **model_map}
        sandbox.credential = SANDBOX_UPSTREAM["credential"]
        sandbox.save()
        self.stdout.write(f"Catalog: {len(DEMO_MODELS)} models, all routed to the sandbox upstream.")
        priced = set(Price.objects.values_list("model_id", flat=True))
        added, _ = price_table.import_rows([row for row in DEMO_PRICES if row["model_id"] not in priced])
        if added:
            self.stdout.write(f"Prices: {added} models priced.")

        admin = self.ensure_admin(options["admin"])
        if not options["no_key"]:
            key = ApiKey.objects.filter(owner=admin, name=DEMO_KEY_NAME, revoked=False).first()
            if key is None:
                key, secret = ApiKey.issue(admin, name=DEMO_KEY_NAME)
            else:
                # Secrets are stored only as hashes, so showing the key again means rotating it.
                secret = key.set_new_secret()
                key.save()
            self.stdout.write(f"Demo API key ({DEMO_KEY_NAME}): {secret}")

    def ensure_admin(self, username: str):
        User = get_user_model()
        password = settings.STUDIO_ADMIN_PASSWORD
        user = User.objects.filter(username=username).first()
        if user is None:
            generated = not password
            password = password or secrets.token_urlsafe(12)
            user = User.objects.create_superuser(username=username, email="", password=password)
            shown = password if generated else "(from STUDIO_ADMIN_PASSWORD)"
            self.stdout.write(f"Admin login: {username} / {shown}")
        elif password:
            user.set_password(password)
            user.is_staff = user.is_superuser = True
            user.save()
            self.stdout.write(f"Admin login: {username} / (from STUDIO_ADMIN_PASSWORD)")
        else:
            self.stdout.write(f"Admin login: {username} / (unchanged; set STUDIO_ADMIN_PASSWORD to reset it)")
        return user
