"""Multi-turn edit sessions: a tree of turns on an image, each keeping the complete model content.

Replaying a turn must send the model's earlier answer back exactly (every part, every
``thoughtSignature``), so each turn keeps the full user and model ``Content`` it exchanged as
JSON files beside the media (inline images can be megabytes; they do not belong in a row).
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from studio.models.accounts import Team
from studio.models.media import Asset, Generation


class EditSession(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="edit_sessions")
    team = models.ForeignKey(Team, on_delete=models.SET_NULL, null=True, blank=True, related_name="edit_sessions")
    title = models.CharField(max_length=200, blank=True)
    model_id = models.CharField(max_length=120)
    source = models.ForeignKey(Asset, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
                               help_text="The image the session started from.")
    head = models.ForeignKey("EditTurn", on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
                             help_text="The turn the user was last looking at (kept across reloads).")
    created = models.DateTimeField(default=timezone.now)
    updated = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-updated"]

    def __str__(self) -> str:
        return self.title or f"Edit session {self.id}"


class TurnStatus(models.TextChoices):
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    BLOCKED = "blocked", "Blocked or empty"
    FAILED = "failed", "Failed"


def turn_content_path(instance: EditTurn, filename: str) -> str:
    return f"edits/{instance.session_id.hex}/{instance.id.hex}-{filename}"


class EditTurn(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session = models.ForeignKey(EditSession, on_delete=models.CASCADE, related_name="turns")
    parent = models.ForeignKey("self", on_delete=models.CASCADE, null=True, blank=True, related_name="children")
    instruction = models.TextField()
    model_id = models.CharField(max_length=120)
    # The exact Content objects exchanged (JSON files): what the next turn replays.
    user_content = models.FileField(upload_to=turn_content_path, max_length=300, blank=True)
    model_content = models.FileField(upload_to=turn_content_path, max_length=300, blank=True)
    text = models.TextField(blank=True, help_text="Text the model returned with the image.")
    output = models.ForeignKey(Asset, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    generation = models.ForeignKey(Generation, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    status = models.CharField(max_length=12, choices=TurnStatus.choices, default=TurnStatus.RUNNING)
    finish_reason = models.CharField(max_length=60, blank=True)
    error = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created"]

    def __str__(self) -> str:
        return self.instruction[:60]
