"""Issue an API key for a user; the secret is printed alone on the last line."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from studio.models import ApiKey, Budget, Membership, Period, PlatformModel, RateLimit, Team


class Command(BaseCommand):
    help = "Issue a new API key for USERNAME and print its secret (shown only once)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="cli key")
        parser.add_argument("--team", help="Slug or name of a team the user belongs to.")
        parser.add_argument("--models", help="Comma-separated platform model ids the key may use (default: all).")
        parser.add_argument("--expires-days", type=int, help="Days until the key expires.")
        parser.add_argument("--rpm", type=int, help="Requests per minute for this key.")
        parser.add_argument("--tpm", type=int, help="Tokens per minute for this key.")
        parser.add_argument("--ipm", type=int, help="Images per minute for this key.")
        parser.add_argument("--videos", type=int, help="Video tasks this key may run at once.")
        parser.add_argument("--budget-usd", type=Decimal, help="Spending limit of this key, US dollars.")
        parser.add_argument("--budget-period", choices=[p.value for p in Period], default=Period.MONTH.value,
                            help="Period the budget resets after (default: month).")

    def handle(self, *args, **options) -> None:
        User = get_user_model()
        try:
            user = User.objects.get(username=options["username"])
        except User.DoesNotExist:
            raise CommandError(f"no user named {options['username']!r}") from None
        team = None
        if options["team"]:
            team = Team.objects.filter(slug=options["team"]).first() or Team.objects.filter(name=options["team"]).first()
            if team is None:
                raise CommandError(f"no team {options['team']!r}")
            if not Membership.objects.filter(team=team, user=user).exists():
                raise CommandError(f"{user.username} is not a member of {team.name}")
        models = [m.strip() for m in (options["models"] or "").split(",") if m.strip()]
        unknown = sorted(set(models) - set(PlatformModel.objects.filter(model_id__in=models).values_list("model_id", flat=True)))
        if unknown:
            raise CommandError(f"unknown model ids: {', '.join(unknown)}")
        expires = timezone.now() + timedelta(days=options["expires_days"]) if options["expires_days"] else None
        limits = {name: options[option] for name, option in
                  (("rpm", "rpm"), ("tpm", "tpm"), ("ipm", "ipm"), ("concurrent_videos", "videos"))}
        for name, value in limits.items():
            if value is not None and value < 1:
                raise CommandError(f"--{name.replace('concurrent_videos', 'videos')} must be at least 1")
        budget = options["budget_usd"]
        if budget is not None and (not budget.is_finite() or budget < 0):
            raise CommandError("--budget-usd must be a non-negative amount")
        with transaction.atomic():
            key, secret = ApiKey.issue(user, name=options["name"], team=team, allowed_models=models,
                                       expires_at=expires)
            if any(v is not None for v in limits.values()):
                RateLimit.objects.create(api_key=key, **limits)
            if budget is not None:
                Budget.objects.create(api_key=key, limit_usd=budget, period=options["budget_period"])
        self.stderr.write(f"Issued key {key.prefix}… ({key.name}) for {user.username}")
        self.stdout.write(secret)
