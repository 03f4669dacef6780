"""Budget alerts: a row per budget, level and period (the studio banner and the admin read it)
and, when the budget names one, a signed webhook — both written off the response path.

The webhook body is JSON; ``x-studio-signature: t=<epoch>,v1=<hex>`` is an HMAC-SHA256 over
``"<epoch>.<body>"`` with a key derived from ``SECRET_KEY`` (Django's ``salted_hmac``), so a
receiver sharing the secret can check it and reject replays by the timestamp.

The alert row is the webhook's outbox: its URL and body are written with it, in one transaction.
Once that is committed, a thread of the process claims the row (a conditional ``UPDATE``: one
claimant among all processes), sends it and notes the answer; a webhook the receiver did not take
(no answer, 408, 429 or a 5xx) is tried again after 1 s and 4 s, the claim renewed for each pause.
A process that dies meanwhile leaves its claim to lapse, and the worker's
``deliver_due_budget_webhooks`` job claims the row and goes on from the tries already made. So
delivery is at least once: ``x-studio-delivery`` names the alert, for receivers that deduplicate.
The URL gets the rules of a client's callback URL (``safe_fetch.post_public``); a refused one is
noted on the alert and not tried again.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING

import orjson

from studio.core.entries import BudgetEntry
from studio.gateway import recording

if TYPE_CHECKING:
    from django.db.models import Q

logger = logging.getLogger(__name__)

SALT = "studio.budget-webhook"
WEBHOOK_TIMEOUT = 5.0
# Seconds before the second and the third try of a webhook the receiver did not take (no answer,
# 408, 429 or a 5xx); a refusal (any other 4xx) is not tried again.
RETRY_DELAYS = (1.0, 4.0)
# How long a claim lasts past a try's start (renewed for each pause): several times a try's
# timeout (which bounds each of its steps), so a claim that lapses is one whose process is gone.
CLAIM_SECONDS = 6 * WEBHOOK_TIMEOUT
DUE_BATCH = 20  # the most webhooks a worker's round takes on
STATUS_LENGTH = 200  # of the alert's ``webhook_status``


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
        from django.utils import timezone

        from studio.models import Budget, BudgetAlert

        budget = Budget.objects.filter(id=self.budget.id).first()
        if budget is None:
            return
        start = datetime.fromtimestamp(self.window_start, UTC)
        url = budget.webhook_url
        try:
            with transaction.atomic():
                alert = BudgetAlert.objects.create(
                    budget=budget, level=self.level, window_start=start, spent_usd=self.spent_usd,
                    webhook_url=url, webhook_body=self.body(start) if url else b"",
                    webhook_due_at=timezone.now() if url else None)
        except IntegrityError:
            return  # another process raised it first
        if url:
            # Once the row is committed (the write's transaction, which other processes' writes
            # wait for on SQLite, must not wait for a webhook), in a thread of its own: the
            # recorder's thread goes on writing the calls' rows meanwhile.
            transaction.on_commit(lambda: start_delivery(alert.pk))

    def body(self, start: datetime) -> bytes:
        return orjson.dumps({
            "type": f"budget.{self.level}", "budget": {"id": self.budget.id, "scope": self.budget.scope,
                                                       "label": self.budget.label, "period": self.budget.period},
            "limit_usd": str(Decimal(self.budget.limit_nano) / Decimal(10**9)),
            "spent_usd": str(self.spent_usd), "period_start": start.isoformat(),
        })


def send(url: str, body: bytes, alert_id: int) -> str:
    """Post ``body``, signed now, under the rules of any URL the gateway posts to (``post_public``:
    http(s) only, every resolved address public unless ``STUDIO_FETCH_ALLOW_PRIVATE``, no
    redirects followed): the receiver's status code, ``refused: <why>`` for a URL those rules
    refuse, or ``error: <kind>``. Runs in a thread without an event loop of its own."""
    import asyncio

    import httpx

    from studio.core.errors import BadRequest
    from studio.gateway.media.safe_fetch import post_public

    headers = {"content-type": "application/json", "x-studio-signature": signature(body, int(time.time())),
               "x-studio-delivery": f"budget-alert-{alert_id}", "user-agent": "studio-gateway-webhooks/1"}
    try:
        status = asyncio.run(post_public(url, body, headers, field="webhook_url", timeout=WEBHOOK_TIMEOUT))
    except BadRequest as exc:
        logger.warning("budget webhook to %s refused: %s", url, exc.message)
        return f"refused: {exc.message.removeprefix('webhook_url: ')}"[:STATUS_LENGTH]
    except (httpx.HTTPError, TimeoutError) as exc:
        logger.warning("budget webhook to %s failed: %s", url, exc)
        return f"error: {type(exc).__name__}"[:STATUS_LENGTH]
    return f"{status}"


def _worth_retrying(status: str) -> bool:
    """Whether a webhook's outcome (``send``'s) may go otherwise on another try."""
    return status.startswith(("error", "5")) or status in ("408", "429")


def _free(now: datetime) -> Q:
    """Unclaimed, or claimed by a process whose claim has lapsed by ``now``."""
    from django.db.models import Q

    return Q(webhook_claimed_until__isnull=True) | Q(webhook_claimed_until__lte=now)


def _claim(alert_id: int) -> str | None:
    """Claim the alert's webhook if it is due and nobody holds it; the claim's token."""
    from django.utils import timezone

    from studio.models import BudgetAlert

    now = timezone.now()
    claim = secrets.token_hex(16)
    won = BudgetAlert.objects.filter(_free(now), pk=alert_id, webhook_due_at__lte=now).update(
        webhook_claim=claim, webhook_claimed_until=now + timedelta(seconds=CLAIM_SECONDS))
    return claim if won else None


def _send_claimed(alert_id: int, claim: str) -> None:
    """Try the claimed webhook until the receiver takes it, refuses it or has had its tries."""
    from django.utils import timezone

    from studio.models import BudgetAlert

    row = BudgetAlert.objects.only("webhook_url", "webhook_body", "webhook_attempts").filter(pk=alert_id).first()
    if row is None:  # its budget was deleted meanwhile, and the alert with it
        return
    attempts = row.webhook_attempts
    while True:
        status = send(row.webhook_url, bytes(row.webhook_body), alert_id)
        attempts += 1
        mine = BudgetAlert.objects.filter(pk=alert_id, webhook_claim=claim)
        if attempts > len(RETRY_DELAYS) or not _worth_retrying(status):
            mine.update(webhook_status=status, webhook_attempts=attempts, webhook_due_at=None, webhook_claim="",
                        webhook_claimed_until=None)
            return
        delay = RETRY_DELAYS[attempts - 1]
        until = timezone.now() + timedelta(seconds=delay + CLAIM_SECONDS)
        if not mine.update(webhook_status=status, webhook_attempts=attempts, webhook_claimed_until=until):
            return  # the claim lapsed and another process has taken the webhook on
        time.sleep(delay)


def deliver(alert_id: int) -> None:
    """Claim and send the alert's webhook, noting each answer (runs in a thread of its own)."""
    from django.db import connection

    try:
        claim = _claim(alert_id)
        if claim is not None:
            _send_claimed(alert_id, claim)
    except Exception:
        logger.exception("sending budget alert %s's webhook failed", alert_id)
    finally:
        connection.close()  # this thread's own, which ends with it
        with _lock:
            _sending.pop(alert_id, None)


# The webhooks under way in this process, each in its thread (``wait_for_webhooks``).
_sending: dict[int, threading.Thread] = {}
_lock = threading.Lock()


def start_delivery(alert_id: int) -> None:
    """Send the alert's webhook in a thread of its own, unless this process already is."""
    with _lock:
        if alert_id in _sending:
            return
        thread = _sending[alert_id] = threading.Thread(target=deliver, args=(alert_id,), name="budget-webhook",
                                                       daemon=True)
    thread.start()


def due_webhooks(limit: int = DUE_BATCH) -> list[int]:
    """The alerts whose webhook is due and unclaimed: retries left by a process that died."""
    from django.utils import timezone

    from studio.models import BudgetAlert

    now = timezone.now()
    return list(BudgetAlert.objects.filter(_free(now), webhook_due_at__lte=now).order_by("webhook_due_at")
                .values_list("pk", flat=True)[:limit])


def wait_for_webhooks(timeout: float = (len(RETRY_DELAYS) + 1) * WEBHOOK_TIMEOUT + sum(RETRY_DELAYS) + 1) -> None:
    """Wait for the webhooks under way to be sent and noted (tests, shutdown)."""
    with _lock:
        threads = list(_sending.values())
    for thread in threads:
        thread.join(timeout)


def raise_alert(budget: BudgetEntry, level: str, window_start: float, spent_usd: Decimal) -> None:
    logger.info("budget %s (%s) reached its %s threshold: $%s", budget.id, budget.label, level, spent_usd)
    recording.submit(AlertRecord(budget, level, window_start, spent_usd))
