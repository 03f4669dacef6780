"""Issue an API key for a user; the secret is printed alone on the last line."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from studio.models import ApiKey, Membership, PlatformModel, Team


class Command(BaseCommand):
    help = "Issue a new API key for USERNAME and print its secret (shown only once)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="cli key")
        parser.add_argument("--team", help="Slug or name of a team the user belongs to.")
        parser.add_argument("--models", help="Comma-separated platform model ids the key may use (default: all).")
        parser.add_argument("--expires-days", type=int, help="Days until the key expires.")

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
        key, secret = ApiKey.issue(user, name=options["name"], team=team, allowed_models=models, expires_at=expires)
        self.stderr.write(f"Issued key {key.prefix}… ({key.name}) for {user.username}")
        self.stdout.write(secret)
