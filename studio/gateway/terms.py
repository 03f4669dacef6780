"""What a key's calls to one model are admitted under, worked out once a minute.

Every admission under limits or budgets needs the same things: the counters of the key's rate
limits (this minute's and the previous minute's), the budgets of its key, user and team with
their counters for the current period, and, for the answer's ``x-ratelimit-*`` headers, which
limits of each kind to compare and their texts. They change only when the minute turns (a
budget's period: the day) or the snapshot does. ``terms_for`` works them out then and keeps them
per key, user, team and model, so a call fills in only its own amounts (``checks``) and reads
its headers off what the counters answered (``limits.admitted_headers`` of its shape's kinds).

The cache is this process's own view of its snapshot, not state that processes share: each
process keeps the terms of its own snapshot, and a new snapshot (a configuration change) starts
it afresh.
"""

from __future__ import annotations

from dataclasses import dataclass

from studio.core.entries import Snapshot
from studio.core.principal import Principal
from studio.gateway import budgets, limits
from studio.gateway.counter_types import Check

MINUTE = limits.MINUTE
DAY = budgets.DAY
MAX_KEPT = 4096  # terms kept at most (the key, user, team and model of each caller)


# What a check adds, by its index in ``Shape.kinds``: one request, the call's tokens, its images,
# or its reserve (a budget's); a settlement moves the holds by the reserve's part and the token
# limits by the tokens' (``Terms.settled_kinds``). A call passes its amounts in this order.
REQUEST, TOKENS, IMAGES, RESERVE = range(4)
_KINDS = {"requests": REQUEST, "tokens": TOKENS, "images": IMAGES}


@dataclass(frozen=True, slots=True)
class Shape:
    """The limits a call is checked against, with or without the images-per-minute ones (a call
    that makes no image is not checked against them): the checks come in this order, then the
    budgets'. ``keys``, ``limits`` and ``kinds`` are every check's counter, limit and which of a
    call's ``amounts`` it adds, for a call served from this process's leases, which needs no
    ``Check``."""

    rows: tuple[tuple[limits.Rule, str, str], ...]  # (rule, this minute's counter, the previous one's)
    rules: list[limits.Rule]
    header_kinds: tuple[limits.HeaderKind, ...]
    keys: tuple[str, ...]
    limits: tuple[int, ...]
    kinds: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Terms:
    minute: int
    without_images: Shape
    with_images: Shape
    token_keys: tuple[str, ...]  # the token-limit counters settled after the call
    holds: tuple[budgets.Hold, ...]
    hold_rows: tuple[tuple[str, int, int, int], ...]  # each hold's (counter, limit, ttl, base)
    settled_keys: tuple[str, ...]  # the counters a settlement changes: the holds', then the tokens'
    settled_kinds: tuple[int, ...]  # which of a settlement's amounts each of them moves by

    def shape(self, images: int) -> Shape:
        return self.with_images if images else self.without_images

    def checks(self, shape: Shape, *, tokens: int, images: int, reserve_nano: int, now: float) -> list[Check]:
        """The call's checks: a request, ``tokens`` and ``images`` against each limit of ``shape``
        (this minute's counter, weighing the previous minute's), then ``reserve_nano`` against
        each budget (``budgets.checks``)."""
        weight = 1 - (now - self.minute * MINUTE) / MINUTE  # the share of the previous minute still counted
        out = []
        for rule, key, previous in shape.rows:
            what, limit = rule.what, rule.limit
            if what == "requests":
                out.append(Check(key, limit, 1, 1, 2 * MINUTE, 0, previous, weight))
            elif what == "tokens":
                # A call larger than a whole minute's tokens needs an empty window.
                out.append(Check(key, limit, tokens if tokens < limit else limit, tokens, 2 * MINUTE, 0, previous,
                                 weight))
            else:
                out.append(Check(key, limit, images, images, 2 * MINUTE, 0, previous, weight))
        need = reserve_nano if reserve_nano > 1 else 1
        for key, limit, ttl, base in self.hold_rows:
            out.append(Check(key, limit, need, reserve_nano, ttl, base))
        return out


_kept: dict[tuple[int | None, int, int | None, str], Terms | None] = {}
_snap: list[Snapshot | None] = [None]  # the snapshot the kept terms were worked out from


def terms_for(snap: Snapshot, principal: Principal, model_id: str, now: float) -> Terms | None:
    """The terms of ``principal``'s calls to ``model_id`` now; None when no limit and no budget applies."""
    minute = int(now // MINUTE)
    key = (principal.key_id, principal.user_id, principal.team_id, model_id)
    if _snap[0] is snap:
        found = _kept.get(key, False)
        if found is None:
            return None
        if found and found.minute == minute:
            return found
    else:  # a new snapshot: the terms of the old one go (and the old snapshot with them)
        _kept.clear()
        _snap[0] = snap
    terms = _work_out(snap, principal, model_id, minute, int(now // DAY))
    if len(_kept) >= MAX_KEPT:
        _kept.clear()
    _kept[key] = terms
    return terms


def _work_out(snap: Snapshot, principal: Principal, model_id: str, minute: int, day: int) -> Terms | None:
    found_limits = limits.entries_for(snap, principal, model_id)
    found_budgets = budgets.applicable(snap, principal)
    if not found_limits and not found_budgets:
        return None
    rows = limits.counters_of(tuple(found_limits), principal.key_id or 0, minute)
    held = [budgets.hold_of(budget, day) for budget in found_budgets]
    hold_rows = tuple((hold.key, hold.budget.limit_nano, hold.ttl, base) for hold, base in held)
    token_keys = tuple(counter for rule, counter, _ in rows if rule.what == "tokens")
    return Terms(
        minute=minute,
        without_images=_shape(tuple(row for row in rows if row[0].what != "images"), hold_rows),
        with_images=_shape(rows, hold_rows),
        token_keys=token_keys,
        holds=tuple(hold for hold, _ in held),
        hold_rows=hold_rows,
        settled_keys=tuple(key for key, _, _, _ in hold_rows) + token_keys,
        settled_kinds=(RESERVE,) * len(hold_rows) + (TOKENS,) * len(token_keys),
    )


def _shape(rows: tuple[tuple[limits.Rule, str, str], ...], hold_rows: tuple[tuple[str, int, int, int], ...]) -> Shape:
    rules = [rule for rule, _, _ in rows]
    return Shape(rows, rules, limits.header_kinds(rules),
                 keys=tuple(key for _, key, _ in rows) + tuple(key for key, _, _, _ in hold_rows),
                 limits=tuple(rule.limit for rule in rules) + tuple(limit for _, limit, _, _ in hold_rows),
                 kinds=tuple(_KINDS[rule.what] for rule in rules) + (RESERVE,) * len(hold_rows))
