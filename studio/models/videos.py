"""Asynchronous video tasks: the row is the job (status, poll schedule, lease, mirrored media)."""

from __future__ import annotations

import re
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

from studio.core.video_states import TERMINAL_STATUSES, VideoStatus
from studio.models.accounts import ApiKey, Team
from studio.models.catalog import Upstream
from studio.models.media import Asset


def new_task_id() -> str:
    # The gateway's own id: never the upstream's, so a client cannot probe vendor ids.
    return "vt-" + secrets.token_hex(12)


_TASK_ID = re.compile(r"vt-[0-9a-f]{24}")


def is_task_id(value: str) -> bool:
    """Whether ``value`` has the shape of our ids (anything else cannot name a task)."""
    return _TASK_ID.fullmatch(value) is not None


class VideoProtocol(models.TextChoices):
    """The inbound video wire formats (the spec's protocols A, B and C)."""

    ARK = "ark", "ark (protocol A, /v1/alpha)"
    DASHSCOPE = "dashscope", "dashscope (protocol B, /v1/beta)"
    GENERIC = "generic", "generic (protocol C, /v1/video)"


class VideoTask(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=new_task_id, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="video_tasks")
    api_key = models.ForeignKey(ApiKey, on_delete=models.SET_NULL, null=True, blank=True)
    team = models.ForeignKey(Team, on_delete=models.SET_NULL, null=True, blank=True)
    protocol = models.CharField(max_length=12, choices=VideoProtocol.choices)
    model_id = models.CharField(max_length=120)
    # Always polled with the upstream (and so the credential) that created it.
    upstream = models.ForeignKey(Upstream, on_delete=models.PROTECT, related_name="video_tasks")
    upstream_protocol = models.CharField(max_length=20, help_text="The protocol spoken to the upstream.")
    upstream_model = models.CharField(max_length=160)
    upstream_task_id = models.CharField(max_length=200, db_index=True)
    status = models.CharField(max_length=12, choices=VideoStatus.choices, default=VideoStatus.QUEUED)
    upstream_status = models.CharField(max_length=40, blank=True)
    upstream_record = models.JSONField(default=dict, blank=True)
    request = models.JSONField(default=dict, blank=True, help_text="The client's create body.")
    prompt = models.TextField(blank=True)
    error_code = models.CharField(max_length=120, blank=True)
    error_message = models.TextField(blank=True)
    video_upstream_url = models.TextField(blank=True)
    last_frame_upstream_url = models.TextField(blank=True)
    video = models.ForeignKey(Asset, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    last_frame = models.ForeignKey(Asset, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    mirror_error = models.TextField(blank=True)
    # Poll schedule and lease: a worker owns the row until ``lease_expires_at``.
    next_poll_at = models.DateTimeField(default=timezone.now)
    poll_attempts = models.PositiveIntegerField(default=0)
    unreadable_polls = models.PositiveIntegerField(
        default=0, help_text="Polls in a row whose answer was not of the upstream protocol's shape.")
    last_polled_at = models.DateTimeField(null=True, blank=True)
    lease_owner = models.CharField(max_length=80, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(help_text="created + execution_expires_after")
    # Callbacks: the upstream posts to our signed address; the client's own URL gets relays.
    callback_injected = models.BooleanField(default=False)
    client_callback_url = models.TextField(blank=True)
    event_seq = models.PositiveIntegerField(default=0)
    # Cost: reserved against budgets at creation, settled when the task ends (charged on success only).
    reserved_usd = models.DecimalField(max_digits=18, decimal_places=9, default=0)
    reserved_at = models.FloatField(default=0, help_text="Epoch seconds of the reservation.")
    cost_usd = models.DecimalField(max_digits=18, decimal_places=9, default=0)
    settled = models.BooleanField(default=False)
    created = models.DateTimeField(default=timezone.now)
    updated = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        indexes = [
            models.Index(fields=["user", "-created"], name="videotask_user_created"),
            # The worker's claim query: active rows that are due.
            models.Index(fields=["status", "next_poll_at"], name="videotask_due"),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.model_id} {self.status}"

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES


class WebhookDelivery(models.Model):
    """One status change of a task to relay to the client's ``callback_url``: an outbox row,
    written in the same transaction as the change, so a worker killed at any point loses none
    and a delivered one is not sent again."""

    task = models.ForeignKey(VideoTask, on_delete=models.CASCADE, related_name="deliveries")
    seq = models.PositiveIntegerField(help_text="The task's event_seq of this change.")
    status = models.CharField(max_length=12)
    url = models.TextField()
    body = models.BinaryField()
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    lease_owner = models.CharField(max_length=80, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    gave_up_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["task_id", "seq"]
        constraints = [models.UniqueConstraint(fields=["task", "seq"], name="webhook_task_seq")]
        indexes = [models.Index(fields=["delivered_at", "gave_up_at", "next_attempt_at"], name="webhook_due")]

    def __str__(self) -> str:
        return f"{self.task_id}#{self.seq} {self.status}"
