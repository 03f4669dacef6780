"""The sandbox vendor cloud's own records: its video tasks and the result files it serves.

They live in the database (and the files in the media storage) so the sandbox behaves like one
vendor cloud whatever process a request reaches: a task created through one web process is
found, rendered and served by any other.
"""

from __future__ import annotations

from django.db import models


class SandboxVideoJob(models.Model):
    """One sandbox video task. Its reported phase follows the clock from ``created`` and the
    render's completion, so no process has to write status changes."""

    id = models.CharField(primary_key=True, max_length=64)
    model = models.CharField(max_length=160)
    prompt = models.TextField(blank=True)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    duration = models.FloatField()
    seed = models.BigIntegerField()
    audio = models.BooleanField(default=True)
    want_last_frame = models.BooleanField(default=False)
    ratio = models.CharField(max_length=20)
    resolution = models.CharField(max_length=20)
    request = models.JSONField(default=dict, blank=True)
    # Storage names of the input images: {"first_frame": name, "last_frame": name, "references": [names]}.
    inputs = models.JSONField(default=dict, blank=True)
    callback_url = models.TextField(blank=True)
    host = models.CharField(max_length=200, blank=True)
    created = models.FloatField(help_text="Epoch seconds.")
    pace = models.FloatField(help_text="Seconds from creation to the earliest success.")
    cancelled_at = models.FloatField(null=True, blank=True)
    # Rendering: whoever holds the lease renders; a lease past its time is taken over.
    render_owner = models.CharField(max_length=80, blank=True)
    render_lease_until = models.FloatField(default=0.0)
    rendered_at = models.FloatField(null=True, blank=True)
    render_error = models.TextField(blank=True)
    video_name = models.CharField(max_length=300, blank=True)
    last_frame_name = models.CharField(max_length=300, blank=True)

    class Meta:
        indexes = [models.Index(fields=["created"], name="sandboxjob_created")]

    def __str__(self) -> str:
        return self.id


class SandboxFile(models.Model):
    """A result the sandbox serves at a URL for a day, like a vendor's temporary result links."""

    key = models.CharField(primary_key=True, max_length=64)
    name = models.CharField(max_length=300, help_text="Name in the media storage.")
    mime = models.CharField(max_length=80)
    expires_at = models.FloatField(help_text="Epoch seconds.")

    def __str__(self) -> str:
        return self.key
