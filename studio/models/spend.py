"""Prices, budgets and rate limits: what a call costs and how much a key, user or team may spend.

Prices are effective-from rows: a new price is a new row, so the cost already stored on past
records never changes. Budgets and limits are read into the gateway's snapshot; their live
counters are in Redis (or process memory), not here.
"""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from studio.models.accounts import ApiKey, Team
from studio.models.catalog import Upstream

MONEY = {"max_digits": 18, "decimal_places": 9}


class Price(models.Model):
    """The price of one platform model (optionally only through one upstream) from a moment on.

    ``per_image`` maps ``size`` or ``size/quality`` (``"1024x1024/high"``, ``"2K"``, ``"*"``) to USD
    per image; ``per_video_second`` maps a resolution (``"720p"``, ``"720p+audio"``, ``"*"``) to USD
    per second of video made. Token prices are USD per million tokens.
    """

    model_id = models.CharField(max_length=120, db_index=True, help_text="Platform model id.")
    upstream = models.ForeignKey(Upstream, on_delete=models.CASCADE, null=True, blank=True, related_name="prices",
                                 help_text="Only calls through this upstream; empty: every upstream.")
    effective_from = models.DateTimeField(default=timezone.now)
    input_per_million = models.DecimalField(default=Decimal(0), **MONEY)
    output_per_million = models.DecimalField(default=Decimal(0), **MONEY)
    cached_per_million = models.DecimalField(null=True, blank=True, help_text="Empty: the input price.", **MONEY)
    per_request = models.DecimalField(default=Decimal(0), **MONEY)
    per_image = models.JSONField(default=dict, blank=True, help_text='{"1024x1024/high": "0.17", "*": "0.04"}')
    per_video_second = models.JSONField(default=dict, blank=True, help_text='{"720p": "0.10", "720p+audio": "0.15"}')
    note = models.CharField(max_length=200, blank=True)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["model_id", "-effective_from"]
        indexes = [models.Index(fields=["model_id", "effective_from"], name="price_model_from")]

    def __str__(self) -> str:
        where = f" via {self.upstream}" if self.upstream_id else ""
        return f"{self.model_id}{where} from {self.effective_from:%Y-%m-%d}"

    def clean(self) -> None:
        for field in ("per_image", "per_video_second"):
            value = getattr(self, field)
            if not isinstance(value, dict):
                raise ValidationError({field: "must be an object of name → USD"})
            for name, usd in value.items():
                try:
                    if Decimal(str(usd)) < 0:
                        raise ValueError
                except (ArithmeticError, ValueError):
                    raise ValidationError({field: f"{name!r}: not a non-negative amount"}) from None


class Period(models.TextChoices):
    DAY = "day", "Day"
    WEEK = "week", "Week"
    MONTH = "month", "Month"
    TOTAL = "total", "Total (never resets)"


class Budget(models.Model):
    """A spending limit for one key, one user or one team, per period (periods start in UTC)."""

    api_key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, null=True, blank=True, related_name="budgets")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True,
                             related_name="budgets")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, null=True, blank=True, related_name="budgets")
    limit_usd = models.DecimalField(**MONEY)
    period = models.CharField(max_length=8, choices=Period.choices, default=Period.MONTH)
    soft_percent = models.PositiveSmallIntegerField(default=80, help_text="Alert when spend reaches this share.")
    webhook_url = models.URLField(blank=True, help_text="Optional: signed POST when an alert is raised.")
    enabled = models.BooleanField(default=True)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created"]
        constraints = [models.CheckConstraint(
            name="budget_one_scope",
            condition=(models.Q(api_key__isnull=False, user__isnull=True, team__isnull=True)
                       | models.Q(api_key__isnull=True, user__isnull=False, team__isnull=True)
                       | models.Q(api_key__isnull=True, user__isnull=True, team__isnull=False)),
        )]

    def __str__(self) -> str:
        return f"{self.scope_label}: ${self.limit_usd.normalize():f} per {self.period}"

    @property
    def scope(self) -> str:
        return "key" if self.api_key_id else "user" if self.user_id else "team"

    @property
    def scope_label(self) -> str:
        if self.api_key_id:
            return f"key {self.api_key}"
        if self.user_id:
            return f"user {self.user}"
        return f"team {self.team}"

    def clean(self) -> None:
        if sum(x is not None for x in (self.api_key_id, self.user_id, self.team_id)) != 1:
            raise ValidationError("choose exactly one of key, user or team")
        if self.limit_usd is not None and self.limit_usd < 0:
            raise ValidationError({"limit_usd": "must not be negative"})
        if not 1 <= self.soft_percent <= 100:
            raise ValidationError({"soft_percent": "must be between 1 and 100"})


class BudgetAlert(models.Model):
    """A budget crossed its soft threshold (``soft``) or its limit (``hard``) in one period."""

    budget = models.ForeignKey(Budget, on_delete=models.CASCADE, related_name="alerts")
    level = models.CharField(max_length=4, choices=[("soft", "Soft threshold"), ("hard", "Limit reached")])
    window_start = models.DateTimeField()
    spent_usd = models.DecimalField(**MONEY)
    webhook_status = models.CharField(max_length=200, blank=True,
                                      help_text="The receiver's last answer, or why it was not sent.")
    # The webhook's outbox, written with the alert: what to send and where, and how far it got. A
    # process that dies while sending leaves its claim to lapse, and a worker sends it again.
    webhook_url = models.TextField(blank=True)
    webhook_body = models.BinaryField(blank=True, default=b"")
    webhook_attempts = models.PositiveSmallIntegerField(default=0)
    webhook_due_at = models.DateTimeField(null=True, blank=True, help_text="Empty: nothing left to send.")
    webhook_claim = models.CharField(max_length=32, blank=True)
    webhook_claimed_until = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created"]
        constraints = [models.UniqueConstraint(fields=["budget", "level", "window_start"], name="one_alert_per_window")]
        indexes = [models.Index(fields=["webhook_due_at"], name="budget_alert_webhook_due")]

    def __str__(self) -> str:
        return f"{self.budget} {self.level} at ${self.spent_usd.normalize():f}"


class RateLimit(models.Model):
    """Limits for one key (optionally for one model), or defaults for every key of a team.

    Empty fields set no limit; a key's own row wins over its team's, field by field.
    """

    api_key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, null=True, blank=True, related_name="rate_limits")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, null=True, blank=True, related_name="rate_limits",
                             help_text="Defaults for every key of this team.")
    model_id = models.CharField(max_length=120, blank=True, help_text="Empty: all models together.")
    rpm = models.PositiveIntegerField(null=True, blank=True, verbose_name="requests per minute")
    tpm = models.PositiveIntegerField(null=True, blank=True, verbose_name="tokens per minute")
    ipm = models.PositiveIntegerField(null=True, blank=True, verbose_name="images per minute")
    concurrent_videos = models.PositiveIntegerField(null=True, blank=True, verbose_name="concurrent video tasks")
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created"]
        constraints = [
            models.CheckConstraint(name="ratelimit_one_scope", condition=(
                models.Q(api_key__isnull=False, team__isnull=True) | models.Q(api_key__isnull=True, team__isnull=False))),
            models.UniqueConstraint(fields=["api_key", "model_id"], name="one_limit_per_key_model"),
            models.UniqueConstraint(fields=["team", "model_id"], name="one_limit_per_team_model"),
        ]

    def __str__(self) -> str:
        who = f"key {self.api_key}" if self.api_key_id else f"team {self.team}"
        return f"{who} {self.model_id or 'all models'}"

    def clean(self) -> None:
        if (self.api_key_id is None) == (self.team_id is None):
            raise ValidationError("choose a key or a team")
