"""Housekeeping jobs: nothing is left spinning."""

from __future__ import annotations

from datetime import timedelta

from asgiref.sync import sync_to_async
from django.utils import timezone

STALE_AFTER = timedelta(minutes=30)


def _sweep() -> int:
    from studio.models import Generation, GenerationStatus

    cutoff = timezone.now() - STALE_AFTER
    return Generation.objects.filter(status=GenerationStatus.RUNNING, started_at__lt=cutoff).update(
        status=GenerationStatus.FAILED,
        error={"status": 504, "message": "the generation did not finish (server restarted or timed out)"},
    )


async def sweep_stale_generations() -> None:
    await sync_to_async(_sweep)()


async def prune_sandbox_results() -> None:
    """The sandbox's image result URLs live a day, like a vendor's; then their files go."""
    from studio.sandbox.ark_images import prune_results

    await sync_to_async(prune_results)()


async def prune_expired_responses() -> None:
    """Stored responses live ``STUDIO_RESPONSE_RETENTION_DAYS``, like the vendor's; then they go."""
    from studio.gateway.text.stored import prune_expired

    await prune_expired()
