"""Rate limits: requests, tokens and images per minute per key and per key-and-model.

Fixed one-minute windows counted in ``counters`` (shared through Redis). A token limit is held
like a budget: the call reserves its estimate (prompt plus the most it may write) and settles
what the upstream reported. Concurrent video tasks are slots held until the task ends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from studio.core.entries import LimitEntry, Snapshot
from studio.core.errors import LimitExceeded
from studio.core.principal import Principal
from studio.gateway.counters import Check

MINUTE = 60
UNIT = {"requests": "rpm", "tokens": "tpm", "images": "ipm"}


@dataclass(frozen=True, slots=True)
class Rule:
    what: str  # requests, tokens or images
    limit: int
    scope: str  # "" (all models) or the model id


@dataclass(slots=True)
class Window:
    """What the headers report for one kind: the tightest limit and what remains of it."""

    limit: int
    remaining: int
    reset: float


@dataclass(slots=True)
class Plan:
    checks: list[Check] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    token_keys: list[str] = field(default_factory=list)


def entries_for(snap: Snapshot, principal: Principal, model_id: str) -> list[tuple[str, LimitEntry]]:
    if principal.key_id is None:
        return []
    found = []
    for scope in ("", model_id):
        entry = snap.limits.get((principal.key_id, scope))
        if entry is not None:
            found.append((scope, entry))
    return found


def plan(entries: list[tuple[str, LimitEntry]], key_id: int, *, requests: int, tokens: int, images: int,
         now: float) -> Plan:
    minute = int(now // MINUTE)
    out = Plan()
    for scope, entry in entries:
        for what, limit, amount in (("requests", entry.rpm, requests), ("tokens", entry.tpm, tokens),
                                    ("images", entry.ipm, images)):
            if limit is None or (what == "images" and amount == 0):
                continue
            key = f"rl:{key_id}:{scope or '*'}:{UNIT[what]}:{minute}"
            # A call larger than a whole minute's tokens is admitted alone in an empty window.
            need = min(amount, limit) if what == "tokens" else amount
            out.checks.append(Check(key=key, limit=limit, need=need, add=amount, ttl=2 * MINUTE))
            out.rules.append(Rule(what, limit, scope))
            if what == "tokens":
                out.token_keys.append(key)
    return out


def reset_in(now: float) -> float:
    return MINUTE - (now % MINUTE)


def windows(rules: list[Rule], values: tuple[int, ...], now: float) -> dict[str, Window]:
    out: dict[str, Window] = {}
    reset = reset_in(now)
    for rule, value in zip(rules, values, strict=False):
        remaining = max(rule.limit - value, 0)
        known = out.get(rule.what)
        if known is None or remaining < known.remaining:
            out[rule.what] = Window(rule.limit, remaining, reset)
    return out


def duration(seconds: float) -> str:
    """OpenAI's spelling of a reset time: ``20ms``, ``1.5s``, ``6m0s``."""
    if seconds < 1:
        return f"{max(math.ceil(seconds * 1000), 1)}ms"
    if seconds < 60:
        return f"{round(seconds, 3):g}s"
    return f"{int(seconds // 60)}m{round(seconds % 60, 3):g}s"


def headers(found: dict[str, Window]) -> dict[str, str]:
    out = {}
    for what, w in found.items():
        out[f"x-ratelimit-limit-{what}"] = str(w.limit)
        out[f"x-ratelimit-remaining-{what}"] = str(w.remaining)
        out[f"x-ratelimit-reset-{what}"] = duration(w.reset)
    return out


def refusal(rule: Rule, value: int, now: float, found: dict[str, Window]) -> LimitExceeded:
    reset = reset_in(now)
    where = f" for model '{rule.scope}'" if rule.scope else ""
    message = (f"rate limit reached: {rule.limit} {rule.what} per minute{where} for this API key "
               f"(used {min(value, rule.limit)}); try again in {duration(reset)}")
    found = {**found, rule.what: Window(rule.limit, max(rule.limit - value, 0), reset)}
    return LimitExceeded(message, code="rate_limit_exceeded", retry_after=reset,
                         details={"limit": rule.what, "headers": headers(found)})


def video_slot(entries: list[tuple[str, LimitEntry]], key_id: int) -> list[tuple[str, int, str]]:
    """(counter key, limit, scope) of each concurrent-video limit that applies."""
    return [(f"vs:{key_id}:{scope or '*'}", entry.concurrent_videos, scope)
            for scope, entry in entries if entry.concurrent_videos is not None]


def video_refusal(limit: int, scope: str) -> LimitExceeded:
    where = f" of model '{scope}'" if scope else ""
    return LimitExceeded(f"rate limit reached: at most {limit} video tasks{where} may run at once for this "
                         "API key; try again when one has finished", code="rate_limit_exceeded", retry_after=10,
                         details={"limit": "videos"})
