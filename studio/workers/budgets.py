"""Budget alerts' webhooks that are due and unclaimed (their process died while sending): sent here."""

from __future__ import annotations

from asgiref.sync import sync_to_async

from studio.gateway import budget_alerts


async def deliver_due_budget_webhooks() -> None:
    """The registered background job: each due webhook goes out in a thread of its own."""
    for alert_id in await sync_to_async(budget_alerts.due_webhooks)():
        budget_alerts.start_delivery(alert_id)
