"""The designer's library: collections inside galleries, and saved and recent prompts."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from studio.models.accounts import Team


class Collection(models.Model):
    """A named folder of assets, personal (no team) or inside a team's gallery."""

    name = models.CharField(max_length=120)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="collections")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, null=True, blank=True, related_name="collections")
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Prompt(models.Model):
    """A prompt the user saved to the library (``saved``) or ran recently (history)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="prompts")
    text = models.TextField()
    title = models.CharField(max_length=120, blank=True)
    tags = models.JSONField(default=list, blank=True)
    saved = models.BooleanField(default=False, help_text="In the library (not only in the history).")
    use_count = models.PositiveIntegerField(default=0)
    last_used = models.DateTimeField(default=timezone.now, db_index=True)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-last_used"]
        indexes = [models.Index(fields=["owner", "saved", "-last_used"])]

    def __str__(self) -> str:
        return self.title or self.text[:60]
