"""Responses the gateway stored for ``GET``/``DELETE /v1/responses/{id}`` and their input items."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from studio.models.accounts import ApiKey


class StoredResponse(models.Model):
    """One response object as the client received it, and the input items it was made from.

    Visible to its owner only (the user whose key made it); ``store: false`` requests are never
    written. ``context`` is the whole input the upstream was given: the turns of the response
    named by ``previous_response_id`` (its context and output) followed by this request's input,
    so a response that continues this one needs this row only. Rows older than
    ``STUDIO_RESPONSE_RETENTION_DAYS`` are treated as gone and deleted by the worker.
    """

    id = models.CharField(max_length=120, primary_key=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="stored_responses")
    api_key = models.ForeignKey(ApiKey, on_delete=models.SET_NULL, null=True, blank=True)
    model_id = models.CharField(max_length=120)
    response = models.JSONField()
    input_items = models.JSONField(default=list)
    context = models.JSONField(default=list)
    created = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created"]
