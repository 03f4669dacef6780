"""The one admission point of every family: rate limits and budgets before a call, cost after.

An engine calls ``admit`` once it knows the model (before any upstream is called) with an
estimate of what the call will use. Under the key's limits and every budget of its key, user
and team, the estimate is reserved (requests, tokens, images, dollars: all or none, in one
atomic step of the shared counters); otherwise a typed error (``LimitExceeded`` /
``QuotaExceeded``) is raised, which each family renders as its own 429. When the call ends the
engine's record calls ``Ticket.charge`` with what the upstream reported: the cost is computed
from the price in effect when the call started, and the reservation is settled against the real
cost (or released for a failed call) in the background, off the response path.

A key with no limits and no budgets costs no counter round trip at all.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import NoReturn

from studio.core.entries import BudgetEntry, ModelEntry, PriceEntry, Snapshot
from studio.core.principal import Principal
from studio.gateway import budget_alerts, budgets, clock, counters, limits, prices, snapshot, terms
from studio.gateway.cost import ZERO, Usage, compute, compute_float, compute_nano, display, from_nano
from studio.gateway.counter_types import Check, Outcome

logger = logging.getLogger(__name__)

_pending: set[asyncio.Task] = set()


class Collect:
    """Where the API layer finds the ticket of the request it is serving (for its headers)."""

    __slots__ = ("ticket",)

    def __init__(self) -> None:
        self.ticket: Ticket | None = None


current: contextvars.ContextVar[Collect | None] = contextvars.ContextVar("studio_admission", default=None)


@dataclass(slots=True)
class Ticket:
    """A call's admission: what it reserved, and (once charged) what it cost."""

    principal: Principal
    model_id: str
    prices: tuple[PriceEntry, ...]
    at: float  # when the call started: the price in effect then applies
    estimate_nano: int = 0  # what it reserved against its budgets (worked out under any)
    # Set once admitted under limits or budgets (a call without any keeps the shared empties).
    holds: Sequence[budgets.Hold] = ()
    reserved_nano: int = 0
    reserved_tokens: int = 0
    settled_keys: tuple[str, ...] = ()  # the holds', then the token limits' counters
    settled_kinds: tuple[int, ...] = ()  # which of a settlement's amounts each moves by (``terms``)
    # x-ratelimit-* for the response, as Django's header store holds them: name → (name, value)
    headers: dict[str, tuple[str, str]] | None = None
    cost: Decimal | None = None
    # Once charged: what the upstream reported (None for a failed call) and which upstream answered.
    usage: Usage | None = None
    upstream_id: int | None = None
    cost_text: str | None = None  # ``cost_display``'s, once charged

    @property
    def estimate(self) -> Decimal:
        return from_nano(self.estimate_nano)

    def cost_display(self) -> str:
        """The cost as ``display`` writes it (``0`` until charged). Worked out once charged: the
        cost header and the request log line both show it."""
        text = self.cost_text
        if text is None:
            if self.cost is None:
                return "0"
            text = self.cost_text = display(self.cost)
        return text

    def price(self, upstream_id: int | None) -> PriceEntry | None:
        return prices.find(self.prices, upstream_id, self.at)

    def quote(self, usage: Usage, upstream_id: int | None) -> Decimal:
        """The cost of ``usage`` without settling (for a stream's final event, before the end)."""
        return compute(self.price(upstream_id), usage)

    def quote_usd(self, usage: Usage, upstream_id: int | None) -> float:
        """``float(quote(...))``, worked out without a ``Decimal`` where the price allows it."""
        return compute_float(self.price(upstream_id), usage)

    def charge(self, usage: Usage | None, upstream_id: int | None) -> Decimal:
        """Settle once: the real cost of ``usage`` (``None``: the call failed, nothing is charged)."""
        if self.cost is not None:
            return self.cost
        self.usage, self.upstream_id = usage, upstream_id
        nano = 0 if usage is None else compute_nano(self.price(upstream_id), usage)
        self.cost = ZERO if usage is None else from_nano(nano)
        if self.settled_keys:
            tokens = 0 if usage is None else usage.input_tokens + usage.output_tokens
            settle_later(self.holds, self.settled_keys, self.settled_kinds, nano - self.reserved_nano,
                         tokens - self.reserved_tokens)
        return self.cost


def _background(work) -> None:
    try:
        task = asyncio.get_running_loop().create_task(work)
    except RuntimeError:  # no event loop in this thread: settle here
        asyncio.run(work)
        return
    _pending.add(task)
    task.add_done_callback(_pending.discard)


async def drain() -> None:
    """Wait for every settlement started so far (tests, shutdown)."""
    while True:
        await counters.get().flush()
        if not _pending:
            return
        await asyncio.gather(*list(_pending), return_exceptions=True)


def _changes(holds: Sequence[budgets.Hold], delta_nano: int,
             token_changes: list[tuple[str, int]]) -> list[tuple[str, int, int]]:
    return [(h.key, delta_nano, h.ttl) for h in holds] + [(k, d, 2 * limits.MINUTE) for k, d in token_changes]


def settle_later(holds: Sequence[budgets.Hold], keys: tuple[str, ...], kinds: tuple[int, ...], delta_nano: int,
                 delta_tokens: int) -> None:
    """``settle`` without a task of its own: ``keys`` (the holds' counters, then the token
    limits', each moving as ``kinds`` says: ``terms.Terms.settled_kinds``) change by
    ``delta_nano`` and ``delta_tokens``, from what this process holds of them or queued with its
    other counter operations, off the response path (a soft alert, rare, gets a task when a
    budget crosses it)."""
    try:
        store = counters.get()
    except RuntimeError:  # no event loop in this thread: settle here
        asyncio.run(settle(holds, delta_nano, [(key, delta_tokens) for key in keys[len(holds):]]))
        return
    # The amounts by kind: ``terms.REQUEST``, ``TOKENS``, ``IMAGES``, ``RESERVE``.
    values = store.add_held(keys, (0, delta_tokens, 0, delta_nano), kinds)
    if values is not None:
        # ``_settled``'s test written out: a settlement that crosses no soft alert (nearly all of
        # them) calls nothing more.
        for hold, value in zip(holds, values, strict=False):
            if value * 100 >= hold.soft:
                _settled(holds, values, background=True)
                break
        return
    changes = _changes(holds, delta_nano, [(key, delta_tokens) for key in keys[len(holds):]])
    store.add_later(changes, lambda values: _settled(holds, values, background=True))


async def settle(holds: Sequence[budgets.Hold], delta_nano: int, token_changes: list[tuple[str, int]]) -> None:
    changes = _changes(holds, delta_nano, token_changes)
    if not changes:
        return
    try:
        values = await counters.get().add(changes)
    except Exception:
        values = None
    for alert in _settled(holds, values, background=False):
        await alert


def _settled(holds: Sequence[budgets.Hold], values: tuple[int, ...] | None, *, background: bool) -> list:
    """The soft alerts a settlement's new values call for (started here when ``background``)."""
    if values is None:
        logger.warning("settling spend counters failed")
        return []
    alerts = []
    for hold, value in zip(holds, values, strict=False):
        if value * 100 >= hold.soft:
            alerts.append(_alert(hold.budget, "soft", hold, value))
    if background:
        for alert in alerts:
            _background(alert)
        return []
    return alerts


async def _alert(budget: BudgetEntry, level: str, hold: budgets.Hold, value: int) -> None:
    try:
        first = await counters.get().once(f"alert:{budget.id}:{int(hold.window_start)}:{level}", hold.ttl or 400 * 86400)
    except Exception:
        logger.warning("budget alert check failed", exc_info=True)
        return
    if first:
        budget_alerts.raise_alert(budget, level, hold.window_start, from_nano(value))


async def admit(principal: Principal, model: ModelEntry, estimate: Usage, *, tokens: int = 0, images: int = 0,
                snap: Snapshot | None = None) -> Ticket:
    """Reserve ``estimate`` (and ``tokens`` / ``images`` against per-minute limits) or refuse."""
    snap = snap if snap is not None else await snapshot.get()
    now = clock.now()
    ticket = Ticket(principal, model.model_id, snap.prices.get(model.model_id, ()), now)
    holder = current.get()
    if holder is not None:
        holder.ticket = ticket
    found = terms.terms_for(snap, principal, model.model_id, now)
    if found is None:
        return ticket
    reserve = ticket.estimate_nano = compute_nano(prices.find(ticket.prices, None, now), estimate)
    shape = found.shape(images)
    checks: list[Check] = []
    outcome: Outcome | None = None
    try:
        store = counters.get()
        # The amounts by kind: ``terms.REQUEST``, ``TOKENS``, ``IMAGES``, ``RESERVE``.
        served = store.take(shape.keys, shape.limits, (1, tokens, images, reserve), shape.kinds)
        if served is None:
            checks = found.checks(shape, tokens=tokens, images=images, reserve_nano=reserve, now=now)
            outcome = await store.apply(checks)
    except Exception:  # the counters are unreachable: serve rather than refuse everyone
        logger.warning("spend counters unavailable; admitting without limits", exc_info=True)
        return ticket
    if outcome is not None:
        if outcome.refused >= 0:
            await _refuse(found, shape, checks, outcome, now)
        served = outcome.values, outcome.previous
    ticket.holds, ticket.reserved_nano = found.holds, reserve
    ticket.settled_keys, ticket.settled_kinds, ticket.reserved_tokens = found.settled_keys, found.settled_kinds, tokens
    ticket.headers = limits.admitted_headers(shape.header_kinds, served[0], served[1], now)
    return ticket


async def _refuse(found: terms.Terms, shape: terms.Shape, checks: list[Check], outcome: Outcome,
                  now: float) -> NoReturn:
    """Raise the refusal of the check the counters refused (a hard budget alert first)."""
    i, n = outcome.refused, len(shape.rows)
    if i < n:
        seen = limits.windows(shape.rules[:i], outcome.values[:i], outcome.previous[:i], now)
        raise limits.refusal(shape.rules[i], checks[i].need, outcome.values[i], outcome.previous[i], now, seen)
    hold = found.holds[i - n]
    await _alert(hold.budget, "hard", hold, outcome.values[i])
    raise budgets.refusal(hold.budget, now)


def text_estimate(body_bytes: int, max_tokens: int) -> tuple[Usage, int]:
    """A text call's estimate: about four bytes a prompt token, and the most it may write."""
    prompt = body_bytes // 4
    return Usage(input_tokens=prompt, output_tokens=max_tokens), prompt + max_tokens
