"""Budget alerts: one row per budget, level and period, and a signed webhook a receiver can
check."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import orjson
import pytest
from django.utils.crypto import constant_time_compare

from studio.core.entries import BudgetEntry
from studio.gateway import budget_alerts
from tests.loopback_hook import Hook

pytestmark = pytest.mark.django_db

START = datetime(2026, 3, 1, tzinfo=UTC).timestamp()


@pytest.fixture
def receiver():
    hook = Hook()
    yield hook
    hook.close()


def stored_budget(alice, webhook_url: str = ""):
    from studio.models import Budget

    row = Budget.objects.create(api_key=alice.key, limit_usd=Decimal(5), period="month", webhook_url=webhook_url)
    return BudgetEntry(id=row.id, scope="key", target_id=alice.key.id, limit_nano=5 * 10**9, period="month",
                       soft_percent=80, label="alice's key")


def test_an_alert_is_stored_once_per_level_and_period(alice):
    from studio.models import BudgetAlert

    entry = stored_budget(alice)
    budget_alerts.AlertRecord(entry, "soft", START, Decimal("4.1")).persist()
    budget_alerts.AlertRecord(entry, "soft", START, Decimal("4.5")).persist()  # another process, same window
    budget_alerts.AlertRecord(entry, "hard", START, Decimal("5")).persist()
    alerts = list(BudgetAlert.objects.order_by("level").values_list("level", "spent_usd", "webhook_status"))
    assert alerts == [("hard", Decimal(5), ""), ("soft", Decimal("4.1"), "")]


def test_webhook_is_signed_and_verifiable(alice, receiver):
    from studio.models import BudgetAlert

    entry = stored_budget(alice, receiver.url)
    budget_alerts.AlertRecord(entry, "soft", START, Decimal("4.2")).persist()
    (headers, body), = receiver.received
    assert orjson.loads(body) == {"type": "budget.soft", "budget": {"id": entry.id, "scope": "key",
                                                                     "label": "alice's key", "period": "month"},
                                  "limit_usd": "5", "spent_usd": "4.2", "period_start": "2026-03-01T00:00:00+00:00"}
    stamp = int(headers["x-studio-signature"].split(",")[0][2:])
    assert constant_time_compare(headers["x-studio-signature"], budget_alerts.signature(body, stamp))
    assert budget_alerts.signature(body + b" ", stamp) != headers["x-studio-signature"]
    assert BudgetAlert.objects.get().webhook_status == "204"


def test_an_unreachable_webhook_is_noted_on_the_alert(alice, receiver):
    from studio.models import BudgetAlert

    url = receiver.url
    receiver.close()
    entry = stored_budget(alice, url)
    budget_alerts.AlertRecord(entry, "hard", START, Decimal(5)).persist()
    assert BudgetAlert.objects.get().webhook_status.startswith("error: ")


def test_a_deleted_budget_raises_nothing(alice):
    from studio.models import Budget, BudgetAlert

    entry = stored_budget(alice)
    Budget.objects.all().delete()
    budget_alerts.AlertRecord(entry, "soft", START, Decimal(1)).persist()
    assert not BudgetAlert.objects.exists()
