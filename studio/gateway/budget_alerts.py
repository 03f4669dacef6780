"""Budget alerts: a row per budget, level and period (the studio banner and the admin read it)
and, when the budget names one, a signed webhook — both written off the response path.

The webhook body is JSON; ``x-studio-signature: t=<epoch>,v1=<hex>`` is an HMAC-SHA256 over
``"<epoch>.<body>"`` with a key derived from ``SECRET_KEY`` (Django's ``salted_hmac``), so a
receiver sharing the secret can check it and reject replays by the timestamp.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

import orjson

from studio.core.entries import BudgetEntry
from studio.gateway import recording

logger = logging.getLogger(__name__)

SALT = "studio.budget-webhook"
WEBHOOK_TIMEOUT = 5.0
# Seconds before the second and the third try of a webhook the receiver did not take (no answer,
# 408, 429 or a 5xx); a refusal (any other 4xx) is not tried again.
RETRY_DELAYS = (1.0, 4.0)


def signature(body: bytes, timestamp: int) -> str:
    from django.utils.crypto import salted_hmac

    digest = salted_hmac(SALT, f"{timestamp}.".encode() + body, algorithm="sha256").hexdigest()
    return f"t={timestamp},v1={digest}"


@dataclass(slots=True)
class AlertRecord(recording.Record):
    budget: BudgetEntry
    level: str
    window_start: float
    spent_usd: Decimal

    def persist(self) -> None:
        from django.db import IntegrityError, transaction

        from studio.models import Budget, BudgetAlert

        budget = Budget.objects.filter(id=self.budget.id).first()
        if budget is None:
            return
        start = datetime.fromtimestamp(self.window_start, UTC)
        try:
            with transaction.atomic():
                alert = BudgetAlert.objects.create(budget=budget, level=self.level, window_start=start,
                                                   spent_usd=self.spent_usd)
        except IntegrityError:
            return  # another process raised it first
        if budget.webhook_url:
            # Once the row is committed (the write's transaction, which other processes' writes
            # wait for on SQLite, must not wait for a webhook), in a thread of its own: the
            # recorder's thread goes on writing the calls' rows meanwhile.
            url = budget.webhook_url
            transaction.on_commit(lambda: _start(self.deliver, alert.pk, url, start))

    def deliver(self, alert_id: int, url: str, start: datetime) -> None:
        """Send the webhook and note its outcome on the alert (runs in a thread of its own)."""
        from django.db import connection

        from studio.models import BudgetAlert

        try:
            status = self.send(url, start)
            for delay in RETRY_DELAYS:
                if not _worth_retrying(status):
                    break
                time.sleep(delay)
                status = self.send(url, start)
            BudgetAlert.objects.filter(pk=alert_id).update(webhook_status=status)
        except Exception:
            logger.exception("noting budget alert %s's webhook failed", alert_id)
        finally:
            connection.close()  # this thread's own, which ends with it
            _sending.discard(threading.current_thread())

    def send(self, url: str, start: datetime) -> str:
        import httpx

        body = orjson.dumps({
            "type": f"budget.{self.level}", "budget": {"id": self.budget.id, "scope": self.budget.scope,
                                                       "label": self.budget.label, "period": self.budget.period},
            "limit_usd": str(Decimal(self.budget.limit_nano) / Decimal(10**9)),
            "spent_usd": str(self.spent_usd), "period_start": start.isoformat(),
        })
        headers = {"content-type": "application/json", "x-studio-signature": signature(body, int(time.time()))}
        try:
            response = httpx.post(url, content=body, headers=headers, timeout=WEBHOOK_TIMEOUT)
        except httpx.HTTPError as exc:
            logger.warning("budget webhook to %s failed: %s", url, exc)
            return f"error: {type(exc).__name__}"[:60]
        return f"{response.status_code}"


def _worth_retrying(status: str) -> bool:
    """Whether a webhook's outcome (``send``'s) may go otherwise on another try."""
    return status.startswith(("error", "5")) or status in ("408", "429")


# The webhooks under way, each in its thread (``wait_for_webhooks``).
_sending: set[threading.Thread] = set()


def _start(deliver: Callable[[int, str, datetime], None], alert_id: int, url: str, start: datetime) -> None:
    thread = threading.Thread(target=deliver, args=(alert_id, url, start), name="budget-webhook", daemon=True)
    _sending.add(thread)
    thread.start()


def wait_for_webhooks(timeout: float = (len(RETRY_DELAYS) + 1) * WEBHOOK_TIMEOUT + sum(RETRY_DELAYS) + 1) -> None:
    """Wait for the webhooks under way to be sent and noted (tests, shutdown)."""
    for thread in list(_sending):
        thread.join(timeout)


def raise_alert(budget: BudgetEntry, level: str, window_start: float, spent_usd: Decimal) -> None:
    logger.info("budget %s (%s) reached its %s threshold: $%s", budget.id, budget.label, level, spent_usd)
    recording.submit(AlertRecord(budget, level, window_start, spent_usd))
