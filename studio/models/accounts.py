"""Teams, memberships and API keys."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

KEY_PREFIX = "sgw-"


class Team(models.Model):
    name = models.CharField(max_length=120)
    slug = models.SlugField(max_length=120, unique=True)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Role(models.TextChoices):
    OWNER = "owner", "Owner"
    ADMIN = "admin", "Admin"
    MEMBER = "member", "Member"
    VIEWER = "viewer", "Viewer"


# Higher rank includes every right of the lower ones.
ROLE_RANK = {Role.VIEWER: 0, Role.MEMBER: 1, Role.ADMIN: 2, Role.OWNER: 3}


class Membership(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["team", "user"], name="one_membership_per_team")]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"

    def has_role(self, role: str) -> bool:
        return ROLE_RANK[Role(self.role)] >= ROLE_RANK[Role(role)]


def hash_secret(secret: str) -> str:
    """Keys are random 32-byte tokens, so a plain SHA-256 is enough (no password stretching)."""
    return hashlib.sha256(secret.encode()).hexdigest()


class ApiKey(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys")
    team = models.ForeignKey(Team, on_delete=models.SET_NULL, null=True, blank=True, related_name="api_keys")
    name = models.CharField(max_length=120, default="default")
    prefix = models.CharField(max_length=16, editable=False, help_text="The first characters, for display.")
    secret_hash = models.CharField(max_length=64, unique=True, editable=False)
    allowed_models = models.JSONField(
        default=list, blank=True, help_text="Platform model ids this key may use; empty means all."
    )
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked = models.BooleanField(default=False)
    last_used_at = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @classmethod
    def issue(cls, owner, *, name: str = "default", team: Team | None = None,
              allowed_models: list[str] | None = None, expires_at=None) -> tuple[ApiKey, str]:
        """Create a key and return it with its secret; the secret is never stored."""
        key = cls(owner=owner, name=name, team=team, allowed_models=allowed_models or [], expires_at=expires_at)
        secret = key.set_new_secret()
        key.save()
        return key, secret

    def set_new_secret(self) -> str:
        secret = KEY_PREFIX + secrets.token_urlsafe(32)
        self.prefix = secret[:12]
        self.secret_hash = hash_secret(secret)
        return secret

    @property
    def is_active(self) -> bool:
        return not self.revoked and (self.expires_at is None or self.expires_at > timezone.now())
