"""Budget alerts: one row per budget, level and period, and a signed webhook a receiver can
check."""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime
from decimal import Decimal

import orjson
import pytest
from django.utils.crypto import constant_time_compare

from studio.core.entries import BudgetEntry
from studio.gateway import budget_alerts, recording
from tests.loopback_hook import Hook

pytestmark = pytest.mark.django_db

START = datetime(2026, 3, 1, tzinfo=UTC).timestamp()


@pytest.fixture(autouse=True)
def loopback_receivers(settings):
    """The receivers here listen on loopback, which only ``STUDIO_FETCH_ALLOW_PRIVATE`` lets a
    webhook reach."""
    settings.STUDIO_FETCH_ALLOW_PRIVATE = True


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


@pytest.mark.django_db(transaction=True)
def test_webhook_is_signed_and_verifiable(alice, receiver):
    from studio.models import BudgetAlert

    entry = stored_budget(alice, receiver.url)
    budget_alerts.AlertRecord(entry, "soft", START, Decimal("4.2")).persist()
    budget_alerts.wait_for_webhooks()
    (headers, body), = receiver.received
    assert orjson.loads(body) == {"type": "budget.soft", "budget": {"id": entry.id, "scope": "key",
                                                                     "label": "alice's key", "period": "month"},
                                  "limit_usd": "5", "spent_usd": "4.2", "period_start": "2026-03-01T00:00:00+00:00"}
    stamp = int(headers["x-studio-signature"].split(",")[0][2:])
    assert constant_time_compare(headers["x-studio-signature"], budget_alerts.signature(body, stamp))
    assert budget_alerts.signature(body + b" ", stamp) != headers["x-studio-signature"]
    assert BudgetAlert.objects.get().webhook_status == "204"


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_webhook_is_noted_on_the_alert(alice, receiver, monkeypatch):
    from studio.models import BudgetAlert

    monkeypatch.setattr(budget_alerts, "RETRY_DELAYS", (0.01, 0.01))  # tried three times, then noted
    url = receiver.url
    receiver.close()
    entry = stored_budget(alice, url)
    budget_alerts.AlertRecord(entry, "hard", START, Decimal(5)).persist()
    budget_alerts.wait_for_webhooks()
    assert BudgetAlert.objects.get().webhook_status.startswith("error: ")


def test_a_deleted_budget_raises_nothing(alice):
    from studio.models import Budget, BudgetAlert

    entry = stored_budget(alice)
    Budget.objects.all().delete()
    budget_alerts.AlertRecord(entry, "soft", START, Decimal(1)).persist()
    assert not BudgetAlert.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_webhook_goes_out_once_the_alert_is_committed(alice):
    """Through the recorder, as alerts are written: when the receiver hears of the alert, its row
    is there for anyone to read (the write's transaction does not wait for the webhook), and the
    recorder writes other records while the receiver takes its time."""
    from django.db import connection

    from studio.models import BudgetAlert

    seen: list[bool] = []
    answer = threading.Event()

    def look() -> None:  # the receiver's thread: a database connection of its own
        try:
            seen.append(BudgetAlert.objects.filter(level="hard").exists())
        except Exception as exc:  # a row still locked by the writer's transaction
            seen.append(exc)
        finally:
            connection.close()
        assert answer.wait(10)

    hook = Hook(on_post=look)
    try:
        entry = stored_budget(alice, hook.url)

        later = budget_alerts.AlertRecord(entry, "soft", START, Decimal(4))

        async def alerts() -> None:
            recording.submit(budget_alerts.AlertRecord(entry, "hard", START, Decimal(5)))
            await asyncio.wait_for(recording.drain(), 5)
            recording.submit(later)  # written while the receiver still holds the first webhook
            await asyncio.wait_for(recording.drain(), 5)

        asyncio.run(alerts())
        assert BudgetAlert.objects.filter(level="soft").exists()
        answer.set()
        budget_alerts.wait_for_webhooks()
    finally:
        answer.set()
        hook.close()
    assert seen == [True, True]
    assert sorted(BudgetAlert.objects.values_list("level", "webhook_status")) == [("hard", "204"), ("soft", "204")]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("fail_first", "status", "tries"), [(1, "204", 2), (5, "503", 3)])
def test_a_webhook_the_receiver_did_not_take_is_tried_again(alice, monkeypatch, fail_first, status, tries):
    """A 503 is tried again after a pause, up to three tries; the alert notes the last outcome."""
    from studio.models import BudgetAlert

    monkeypatch.setattr(budget_alerts, "RETRY_DELAYS", (0.01, 0.01))
    posts: list[int] = []
    hook = Hook(fail_first=fail_first, on_post=lambda: posts.append(1))
    try:
        entry = stored_budget(alice, hook.url)
        budget_alerts.AlertRecord(entry, "hard", START, Decimal(5)).persist()
        budget_alerts.wait_for_webhooks()
    finally:
        hook.close()
    assert len(posts) == tries
    assert BudgetAlert.objects.get().webhook_status == status


def database_url() -> str:
    """The test database, for another process."""
    from django.db import connection

    found = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{found['NAME']}"
    return f"postgres://{found['USER']}:{found['PASSWORD']}@{found['HOST'] or '127.0.0.1'}:{found['PORT'] or 5432}/" \
           f"{found['NAME']}"


DYING = r"""
import sys
import django
django.setup()
from decimal import Decimal
from studio.core.entries import BudgetEntry
from studio.gateway import budget_alerts
budget_alerts.CLAIM_SECONDS = 0.5
entry = BudgetEntry(id=int(sys.argv[1]), scope="key", target_id=int(sys.argv[2]), limit_nano=5 * 10**9,
                    period="month", soft_percent=80, label="alice's key")
budget_alerts.AlertRecord(entry, "hard", float(sys.argv[3]), Decimal(5)).persist()
budget_alerts.wait_for_webhooks()  # the receiver holds the webhook until this process is killed
"""


@pytest.mark.django_db(transaction=True)
def test_a_webhook_whose_process_died_while_sending_is_sent_by_a_worker(alice):
    """The alert row is the webhook's outbox: a process killed mid-send (``kill -9``) leaves its
    claim to lapse, and the worker's job sends the webhook again, under the same delivery id."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from studio.models import BudgetAlert
    from studio.workers.budgets import deliver_due_budget_webhooks

    first_post, release = threading.Event(), threading.Event()
    posts: list[int] = []

    def hold() -> None:
        posts.append(1)
        if len(posts) == 1:
            first_post.set()
            release.wait(30)

    hook = Hook(on_post=hold)
    root = Path(__file__).resolve().parents[2]
    try:
        entry = stored_budget(alice, hook.url)
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "studio.settings", "DATABASE_URL": database_url(),
               "PYTHONPATH": str(root), "STUDIO_FETCH_ALLOW_PRIVATE": "1"}
        child = subprocess.Popen([sys.executable, "-c", DYING, str(entry.id), str(alice.key.id), str(START)],
                                 cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert first_post.wait(60), child.stderr.read().decode()[-2000:] if child.poll() is not None else ""
        finally:
            os.kill(child.pid, signal.SIGKILL)
            child.wait(10)
        alert = BudgetAlert.objects.get()
        assert alert.webhook_due_at is not None and alert.webhook_claim and alert.webhook_attempts == 0
        assert budget_alerts.due_webhooks() == []  # claimed: not the worker's until the claim lapses
        time.sleep(max((alert.webhook_claimed_until - datetime.now(UTC)).total_seconds(), 0) + 0.05)
        release.set()
        asyncio.run(deliver_due_budget_webhooks())
        budget_alerts.wait_for_webhooks()
    finally:
        release.set()
        hook.close()
    assert len(posts) == 2
    (headers, _), (again, _) = hook.received
    assert headers["x-studio-delivery"] == again["x-studio-delivery"] == f"budget-alert-{alert.id}"
    alert.refresh_from_db()
    assert (alert.webhook_status, alert.webhook_attempts, alert.webhook_due_at, alert.webhook_claim) == \
        ("204", 1, None, "")
    assert budget_alerts.due_webhooks() == []


@pytest.mark.django_db(transaction=True)
def test_a_webhook_is_claimed_by_one_process_at_a_time(alice, monkeypatch):
    from studio.models import BudgetAlert

    sent: list[int] = []
    monkeypatch.setattr(budget_alerts, "send", lambda url, body, alert_id: sent.append(alert_id) or "204")
    monkeypatch.setattr(budget_alerts, "start_delivery", lambda alert_id: None)  # no thread: claimed below
    entry = stored_budget(alice, "http://127.0.0.1:9/hook")
    budget_alerts.AlertRecord(entry, "soft", START, Decimal(4)).persist()
    alert = BudgetAlert.objects.get()
    assert budget_alerts.due_webhooks() == [alert.id]
    claim = budget_alerts._claim(alert.id)
    assert claim and budget_alerts._claim(alert.id) is None  # a second process finds it taken
    assert budget_alerts.due_webhooks() == []
    budget_alerts._send_claimed(alert.id, claim)
    assert sent == [alert.id] and budget_alerts._claim(alert.id) is None  # sent: nothing is due any more
    assert BudgetAlert.objects.get().webhook_status == "204"


@pytest.mark.django_db(transaction=True)
def test_a_webhook_whose_budget_is_deleted_before_it_goes_is_dropped_quietly(alice, monkeypatch, caplog):
    from studio.models import Budget, BudgetAlert

    sent: list[int] = []
    monkeypatch.setattr(budget_alerts, "send", lambda url, body, alert_id: sent.append(alert_id) or "204")
    monkeypatch.setattr(budget_alerts, "start_delivery", lambda alert_id: None)
    entry = stored_budget(alice, "http://127.0.0.1:9/hook")
    budget_alerts.AlertRecord(entry, "hard", START, Decimal(5)).persist()
    alert_id = BudgetAlert.objects.get().id
    claim = budget_alerts._claim(alert_id)
    Budget.objects.all().delete()  # the alert goes with it
    budget_alerts._send_claimed(alert_id, claim)
    budget_alerts.deliver(alert_id)
    assert sent == [] and "failed" not in caplog.text


@pytest.mark.django_db(transaction=True)
def test_a_webhook_to_a_private_address_is_refused_and_not_tried_again(alice, receiver, settings):
    """A budget's webhook URL gets the rules of any URL the gateway posts to: a private address
    is refused unless ``STUDIO_FETCH_ALLOW_PRIVATE`` is set, and the refusal is noted, not retried."""
    from studio.models import BudgetAlert

    settings.STUDIO_FETCH_ALLOW_PRIVATE = False
    entry = stored_budget(alice, receiver.url)
    budget_alerts.AlertRecord(entry, "hard", START, Decimal(5)).persist()
    budget_alerts.wait_for_webhooks()
    assert receiver.received == []
    alert = BudgetAlert.objects.get()
    assert alert.webhook_status.startswith("refused: ")
    assert "private or reserved network address" in alert.webhook_status
    assert (alert.webhook_attempts, alert.webhook_due_at) == (1, None)


@pytest.mark.django_db(transaction=True)
def test_a_cloud_metadata_address_is_refused_even_where_private_ones_are_allowed(alice):
    from studio.models import BudgetAlert

    entry = stored_budget(alice, "http://169.254.169.254/latest/meta-data/")
    budget_alerts.AlertRecord(entry, "hard", START, Decimal(5)).persist()
    budget_alerts.wait_for_webhooks()
    alert = BudgetAlert.objects.get()
    assert alert.webhook_status.startswith("refused: ")
    assert alert.webhook_attempts == 1
