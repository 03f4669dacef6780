"""Generations (one request's record) and the assets (stored files) they take and make."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from studio.core.content_hash import SIZE as CONTENT_HASH_SIZE
from studio.models.accounts import ApiKey, Team
from studio.models.catalog import Upstream


def asset_path(instance: Asset, filename: str) -> str:
    # Spread files over dated folders; the name is the asset id, never the client's filename.
    ext = filename.rsplit(".", 1)[-1] if "." in filename else "bin"
    return f"assets/{instance.created:%Y/%m/%d}/{instance.id.hex}.{ext}"


class Visibility(models.TextChoices):
    PRIVATE = "private", "Private"
    TEAM = "team", "Team"
    LINK = "link", "Anyone with the link"


class GenerationStatus(models.TextChoices):
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    BLOCKED = "blocked", "Blocked or empty"
    FAILED = "failed", "Failed"


class Generation(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="generations")
    api_key = models.ForeignKey(ApiKey, on_delete=models.SET_NULL, null=True, blank=True)
    team = models.ForeignKey(Team, on_delete=models.SET_NULL, null=True, blank=True)
    model_id = models.CharField(max_length=120, db_index=True)
    upstream = models.ForeignKey(Upstream, on_delete=models.SET_NULL, null=True, blank=True)
    route = models.CharField(max_length=60)
    prompt = models.TextField(blank=True)
    parameters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=12, choices=GenerationStatus.choices, default=GenerationStatus.RUNNING)
    finish_reason = models.CharField(max_length=60, blank=True)
    text = models.TextField(blank=True, help_text="Text the model returned with its images.")
    usage = models.JSONField(default=dict, blank=True)
    cost_usd = models.DecimalField(max_digits=18, decimal_places=9, default=0)
    error = models.JSONField(default=dict, blank=True)
    # Live-event replay: the events of a studio job, without image bytes (images are URLs).
    events = models.JSONField(default=list, blank=True)
    parent = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="children")
    started_at = models.DateTimeField(default=timezone.now)
    first_byte_ms = models.IntegerField(null=True, blank=True)
    duration_ms = models.IntegerField(null=True, blank=True)
    created = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["user", "-created"])]

    def __str__(self) -> str:
        return f"{self.model_id} {self.status} {self.created:%Y-%m-%d %H:%M}"


class AssetKind(models.TextChoices):
    IMAGE = "image", "Image"
    VIDEO = "video", "Video"
    AUDIO = "audio", "Audio"
    FILE = "file", "File"


class Asset(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    file = models.FileField(upload_to=asset_path, max_length=300)
    kind = models.CharField(max_length=10, choices=AssetKind.choices, default=AssetKind.IMAGE)
    mime = models.CharField(max_length=80)
    bytes = models.BigIntegerField(default=0)
    width = models.IntegerField(null=True, blank=True)
    height = models.IntegerField(null=True, blank=True)
    # "blake3:" and the hex digest of the bytes ("sha256:…" for assets stored before BLAKE3).
    content_hash = models.CharField(max_length=CONTENT_HASH_SIZE, db_index=True, blank=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assets")
    team = models.ForeignKey(Team, on_delete=models.SET_NULL, null=True, blank=True, related_name="assets")
    visibility = models.CharField(max_length=10, choices=Visibility.choices, default=Visibility.PRIVATE)
    share_token = models.CharField(max_length=64, blank=True, db_index=True)
    generation = models.ForeignKey(
        Generation, on_delete=models.SET_NULL, null=True, blank=True, related_name="outputs"
    )
    # Position among the outputs of its generation (0 = first image).
    index = models.IntegerField(default=0)
    is_input = models.BooleanField(default=False, help_text="Uploaded or sent as an input, not generated.")
    is_draft = models.BooleanField(default=False, help_text="An interim (thought) image shown while generating.")
    metadata = models.JSONField(default=dict, blank=True)
    starred = models.BooleanField(default=False)
    collection = models.ForeignKey(
        "studio.Collection", on_delete=models.SET_NULL, null=True, blank=True, related_name="assets"
    )
    # A small WebP made once, so the gallery never ships full-size images to a grid.
    thumbnail = models.FileField(upload_to="thumbs/", max_length=300, blank=True)
    created = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["owner", "-created"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.id}"
