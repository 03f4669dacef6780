"""Budget alerts: a row per budget, level and period (the studio banner and the admin read it)
and, when the budget names one, a signed webhook — both written off the response path.

The webhook body is JSON; ``x-studio-signature: t=<epoch>,v1=<hex>`` is an HMAC-SHA256 over
``"<epoch>.<body>"`` with a key derived from ``SECRET_KEY`` (Django's ``salted_hmac``), so a
receiver sharing the secret can check it and reject replays by the timestamp.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING

import orjson

from studio.core.entries import BudgetEntry
from studio.gateway import recording

if TYPE_CHECKING:
    from studio.models import BudgetAlert

logger = logging.getLogger(__name__)

SALT = "studio.budget-webhook"
WEBHOOK_TIMEOUT = 5.0


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
            # Once the row is committed: a webhook may take seconds, and the write's transaction
            # (which other processes' writes wait for on SQLite) must not.
            transaction.on_commit(lambda: self.deliver(alert, budget.webhook_url, start))

    def deliver(self, alert: BudgetAlert, url: str, start: datetime) -> None:
        alert.webhook_status = self.send(url, start)
        alert.save(update_fields=["webhook_status"])

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


def raise_alert(budget: BudgetEntry, level: str, window_start: float, spent_usd: Decimal) -> None:
    logger.info("budget %s (%s) reached its %s threshold: $%s", budget.id, budget.label, level, spent_usd)
    recording.submit(AlertRecord(budget, level, window_start, spent_usd))
