"""Prepare the gateway's own database for a run: migrate, catalog, a user with a key, upstreams.

Run by the benchmark in a subprocess with the gateway's environment (``DATABASE_URL`` of a temp
dir), through the Django ORM like any admin change: the chat model (chat and responses) goes to an
"openai" upstream, the messages model to an "anthropic" one and the native image models to a
"gemini" one, all at the fake vendor. Prints the key as JSON.
"""

from __future__ import annotations

import argparse
import os
import sys

import orjson

CHAT_MODEL = "omicron-4-mini"
CHAT_UPSTREAM_MODEL = "gpt-4o-mini"
MESSAGES_MODEL = "epsilon-4.5"
MESSAGES_UPSTREAM_MODEL = "claude-sonnet-4-5"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Set up a benchmark gateway database.")
    parser.add_argument("--upstream", required=True, help="base URL of the fake vendor")
    args = parser.parse_args(argv)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from studio.catalog_data import DEMO_MODELS
    from studio.models import ApiKey, PlatformModel, Upstream

    call_command("migrate", verbosity=0, interactive=False)
    image_models: dict[str, str] = {}
    for spec in DEMO_MODELS:
        defaults = {k: v for k, v in spec.items() if k not in ("model_id", "upstream_model")}
        PlatformModel.objects.update_or_create(model_id=spec["model_id"], defaults=defaults)
        if spec["kind"] == "native-image":
            image_models[spec["model_id"]] = spec["upstream_model"]

    upstreams = [
        ("bench-openai", "openai", {CHAT_MODEL: CHAT_UPSTREAM_MODEL}),
        ("bench-anthropic", "anthropic", {MESSAGES_MODEL: MESSAGES_UPSTREAM_MODEL}),
        ("bench-gemini", "gemini", image_models),
    ]
    for name, protocol, model_map in upstreams:
        upstream, _ = Upstream.objects.update_or_create(
            name=name, defaults={"protocol": protocol, "base_url": args.upstream, "model_map": model_map,
                                 "priority": 10, "weight": 1, "enabled": True},
        )
        upstream.credential = f"{name}-key"
        upstream.save()

    from studio.gateway import price_table
    from studio.price_data import DEMO_PRICES

    price_table.import_rows(DEMO_PRICES)  # every call's cost is computed, limits on or off
    user, _ = get_user_model().objects.get_or_create(username="bench")
    key, secret = ApiKey.issue(user, name="bench")
    if os.environ.get("BENCH_SPEND_LIMITS") == "1":
        # Limits and budgets on (set high, so they are checked on every call but never refuse):
        # the cost of the admission and settlement on the hot path.
        from decimal import Decimal

        from studio.models import Budget, RateLimit

        RateLimit.objects.create(api_key=key, rpm=10**8, tpm=10**9)
        for model_id in (CHAT_MODEL, MESSAGES_MODEL):
            RateLimit.objects.create(api_key=key, model_id=model_id, rpm=10**8, tpm=10**9)
        Budget.objects.create(api_key=key, limit_usd=Decimal(10**6), period="day")
        Budget.objects.create(user=user, limit_usd=Decimal(10**6), period="month")
    sys.stdout.write(orjson.dumps({"key": secret}).decode() + "\n")


if __name__ == "__main__":
    main()
