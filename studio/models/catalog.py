"""The model catalog and the upstream vendor accounts that serve it."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from studio.core import crypto


class ModelKind(models.TextChoices):
    NATIVE_IMAGE = "native-image", "Native image"
    IMAGE = "image", "Image"
    VIDEO = "video", "Video"
    TEXT = "text", "Text"
    EMBEDDING = "embedding", "Embedding"


class PlatformModel(models.Model):
    """A model id clients send. Capabilities are data, so rules are not scattered ifs."""

    model_id = models.CharField(max_length=120, unique=True)
    kind = models.CharField(max_length=20, choices=ModelKind.choices)
    display_name = models.CharField(max_length=120, blank=True)
    description = models.TextField(blank=True)
    routes = models.JSONField(default=list, help_text="Inbound route names that accept this model.")
    capabilities = models.JSONField(default=dict, blank=True)
    # The protocol this model is spoken in when its upstream is the multi-protocol sandbox.
    default_protocol = models.CharField(max_length=20, blank=True)
    owned_by = models.CharField(max_length=60, default="studio")
    created = models.DateTimeField(default=timezone.now)
    enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ["kind", "model_id"]

    def __str__(self) -> str:
        return self.model_id


class Upstream(models.Model):
    """A configured vendor account. Higher ``priority`` is tried first; ``weight`` splits a tier."""

    name = models.CharField(max_length=120, unique=True)
    # A protocol name of the provider registry (the admin offers its choices), or "sandbox".
    protocol = models.CharField(max_length=20)
    base_url = models.URLField(max_length=300)
    credential_encrypted = models.TextField(blank=True, editable=False)
    priority = models.IntegerField(default=0)
    weight = models.PositiveIntegerField(default=1)
    enabled = models.BooleanField(default=True)
    model_map = models.JSONField(default=dict, blank=True, help_text="platform model id → upstream model name")
    timeout = models.FloatField(null=True, blank=True, help_text="Seconds; empty uses the default.")
    # Health, updated off the request path by the router.
    consecutive_failures = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    breaker_open_until = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-priority", "name"]

    def __str__(self) -> str:
        return self.name

    @property
    def credential(self) -> str:
        return crypto.decrypt(self.credential_encrypted) if self.credential_encrypted else ""

    @credential.setter
    def credential(self, value: str) -> None:
        self.credential_encrypted = crypto.encrypt(value) if value else ""


class ConfigRevision(models.Model):
    """One row whose ``number`` goes up, in the same transaction, with every key, model, upstream,
    price, budget or rate limit saved or deleted through the ORM (``gateway.snapshot.changed``).
    A web process's snapshot of those rows checks it every ``STUDIO_CACHE_TTL`` seconds and loads
    them again only when it moved, where it used to load them all every time."""

    number = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"revision {self.number}"
