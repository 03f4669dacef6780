"""Budget webhooks left due and unclaimed (their process died before sending) go out from the worker."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from studio.core.entries import BudgetEntry
from studio.gateway import budget_alerts
from studio.workers import budgets, runner
from tests.loopback_hook import Hook

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_worker_sends_a_budget_webhook_no_process_is_sending(alice, monkeypatch, settings):
    from studio.models import Budget, BudgetAlert

    settings.STUDIO_FETCH_ALLOW_PRIVATE = True  # the receiver is on loopback

    assert "studio.workers.budgets.deliver_due_budget_webhooks" in [job.path for job in runner.jobs()]
    hook = Hook()
    try:
        row = Budget.objects.create(api_key=alice.key, limit_usd=Decimal(5), period="month", webhook_url=hook.url)
        entry = BudgetEntry(id=row.id, scope="key", target_id=alice.key.id, limit_nano=5 * 10**9, period="month",
                            soft_percent=80, label="alice's key")
        with monkeypatch.context() as patched:  # the raising process dies before its thread starts
            patched.setattr(budget_alerts, "start_delivery", lambda alert_id: None)
            budget_alerts.AlertRecord(entry, "soft", datetime(2026, 3, 1, tzinfo=UTC).timestamp(),
                                      Decimal(4)).persist()
        assert BudgetAlert.objects.get().webhook_status == ""
        asyncio.run(budgets.deliver_due_budget_webhooks())
        budget_alerts.wait_for_webhooks()
    finally:
        hook.close()
    assert len(hook.received) == 1
    alert = BudgetAlert.objects.get()
    assert (alert.webhook_status, alert.webhook_attempts, alert.webhook_due_at) == ("204", 1, None)
    asyncio.run(budgets.deliver_due_budget_webhooks())  # nothing is due any more: sent once
    budget_alerts.wait_for_webhooks()
    assert len(hook.received) == 1
