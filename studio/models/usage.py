"""One row per /v1 call: who used which model through which upstream, and what it cost."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from studio.core.streams import CLIENT_CLOSED  # the client left mid-answer: charged for what it got
from studio.models.accounts import ApiKey, Team
from studio.models.catalog import Upstream

# The calls counted as errors: a client that left mid-answer is not a failure of ours or the vendor's.
FAILED = models.Q(status_code__gte=400) & ~models.Q(status_code=CLIENT_CLOSED)


class UsageRecord(models.Model):
    # The key, the user and the team are each indexed with the time (see ``Meta.indexes``): a budget
    # sums its period's records by both, and that index serves a lookup by the owner alone too, so a
    # separate one would only be written for every row and never read.
    api_key = models.ForeignKey(ApiKey, on_delete=models.SET_NULL, null=True, blank=True, related_name="usage",
                                db_index=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                             db_index=False)
    team = models.ForeignKey(Team, on_delete=models.SET_NULL, null=True, blank=True, related_name="usage",
                             db_index=False)
    model_id = models.CharField(max_length=120)
    upstream = models.ForeignKey(Upstream, on_delete=models.SET_NULL, null=True, blank=True)
    route = models.CharField(max_length=60)
    status_code = models.IntegerField(default=200)
    input_tokens = models.IntegerField(default=0)
    output_tokens = models.IntegerField(default=0)
    total_tokens = models.IntegerField(default=0)
    images = models.IntegerField(default=0)
    cached_tokens = models.IntegerField(default=0)
    video_seconds = models.FloatField(default=0)
    cost_usd = models.DecimalField(max_digits=18, decimal_places=9, default=0)
    latency_ms = models.IntegerField(null=True, blank=True)
    first_byte_ms = models.IntegerField(null=True, blank=True)
    created = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["api_key", "-created"]), models.Index(fields=["user", "-created"], name="usage_user_created"),
                   models.Index(fields=["team", "-created"], name="usage_team_created")]
