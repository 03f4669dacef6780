"""Leases on video task rows: which worker polls which task, safe with any number of workers.

Claiming is safe with any number of workers on one database: PostgreSQL locks the due rows
with ``SELECT … FOR UPDATE SKIP LOCKED`` and leases them in the same transaction; databases
without row locks (SQLite) lease each row with a conditional UPDATE that only one worker can
win. A worker that dies keeps its rows only until the lease expires.
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import datetime, timedelta

from django.db import OperationalError, close_old_connections, connection, transaction
from django.db.models import Q
from django.utils import timezone

from studio.core.video_states import ACTIVE_STATUSES
from studio.gateway.video import settings as video_settings
from studio.models.videos import VideoTask

WORKER_ID = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
BATCH = 20


def _claimable(now: datetime) -> Q:
    return (Q(status__in=ACTIVE_STATUSES)
            & (Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lte=now) | Q(lease_owner="")))


def claim_due(worker_id: str, limit: int = BATCH, now: datetime | None = None) -> list[str]:
    """Lease up to ``limit`` due rows to ``worker_id``; returns their ids."""
    close_old_connections()
    now = now or timezone.now()
    until = now + timedelta(seconds=video_settings.lease_seconds())
    due = _claimable(now) & Q(next_poll_at__lte=now)
    if connection.features.has_select_for_update_skip_locked:
        with transaction.atomic():
            ids = list(VideoTask.objects.select_for_update(skip_locked=True).filter(due)
                       .order_by("next_poll_at").values_list("id", flat=True)[:limit])
            if ids:
                VideoTask.objects.filter(id__in=ids).update(lease_owner=worker_id, lease_expires_at=until)
            return ids
    candidates = list(VideoTask.objects.filter(due).order_by("next_poll_at").values_list("id", flat=True)[:limit])
    return [task_id for task_id in candidates if _lease(task_id, worker_id, now, until)]


def claim(task_id: str, worker_id: str) -> bool:
    """Lease one row now, whatever its schedule (a query's refresh); False if someone holds it."""
    close_old_connections()
    now = timezone.now()
    return _lease(task_id, worker_id, now, now + timedelta(seconds=video_settings.lease_seconds()))


def _lease(task_id: str, worker_id: str, now: datetime, until: datetime) -> bool:
    # One UPDATE … WHERE (lease free): the database serialises writers, so exactly one wins.
    try:
        return bool(VideoTask.objects.filter(Q(id=task_id) & _claimable(now))
                    .update(lease_owner=worker_id, lease_expires_at=until))
    except OperationalError:  # SQLite busy past its timeout: leave the row for the next round
        return False
