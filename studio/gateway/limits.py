"""Rate limits: requests, tokens and images per minute per key and per key-and-model.

A sliding one-minute window, counted the way the ``limits`` library's sliding-window counter
does: each clock minute has a counter in ``counters`` (shared through Redis), and a call is
admitted when this minute's count plus the previous minute's count times the share of the
previous minute still inside the last 60 seconds (rounded down) leaves room for it, so no burst
across a minute boundary gets twice the limit. A token limit is held like a budget: the call
reserves its estimate (prompt plus the most it may write) and settles what the upstream
reported. Concurrent video tasks are slots held until the task ends.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from studio.core.entries import LimitEntry, Snapshot
from studio.core.errors import LimitExceeded
from studio.core.principal import Principal

MINUTE = 60
UNIT = {"requests": "rpm", "tokens": "tpm", "images": "ipm"}
HEADERS = {what: (f"x-ratelimit-limit-{what}", f"x-ratelimit-remaining-{what}", f"x-ratelimit-reset-{what}")
           for what in UNIT}


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


def entries_for(snap: Snapshot, principal: Principal, model_id: str) -> list[tuple[str, LimitEntry]]:
    if principal.key_id is None:
        return []
    found = []
    for scope in ("", model_id):
        entry = snap.limits.get((principal.key_id, scope))
        if entry is not None:
            found.append((scope, entry))
    return found


@functools.lru_cache(maxsize=1024)
def counters_of(entries: tuple[tuple[str, LimitEntry], ...], key_id: int,
                minute: int) -> tuple[tuple[Rule, str, str], ...]:
    """Each limit of ``entries`` with its counter this minute and the previous minute's (worked
    out once a minute per key, not per call)."""
    out = []
    for scope, entry in entries:
        for what, limit in (("requests", entry.rpm), ("tokens", entry.tpm), ("images", entry.ipm)):
            if limit is not None:
                base = f"rl:{key_id}:{scope or '*'}:{UNIT[what]}:"
                out.append((Rule(what, limit, scope), f"{base}{minute}", f"{base}{minute - 1}"))
    return tuple(out)


def count(value: int, previous: int, now: float) -> int:
    """The sliding window's count: this minute's plus the previous minute's share still inside."""
    return value + math.floor(previous * (1 - (now % MINUTE) / MINUTE))


def reset_in(value: int, previous: int, now: float) -> float:
    """Seconds until the count is back to 0 (OpenAI's reset: the limit at its initial state)."""
    into = now % MINUTE
    if value > 0:  # this minute's count must slide out in the next one until under 1
        return MINUTE - into + MINUTE * (1 - 1 / value)
    if previous > 0:
        return max(MINUTE * (1 - 1 / previous) - into, 0.0)
    return 0.0


def wait_for(need: int, limit: int, value: int, previous: int, now: float) -> float:
    """Seconds until a call needing ``need`` fits (with nothing else added meanwhile): the first
    moment the previous minute has slid out far enough, in this minute or in the next."""
    into = now % MINUTE
    if need > limit:  # never fits: say when the window turns
        return MINUTE - into
    if value + need <= limit:
        room = limit - need - value
        return max(MINUTE * (1 - (room + 1) / previous) - into, 0.0) if previous > 0 else 0.0
    return MINUTE - into + max(MINUTE * (1 - (limit - need + 1) / value), 0.0)


def windows(rules: list[Rule], values: tuple[int, ...], previous: tuple[int, ...], now: float) -> dict[str, Window]:
    out: dict[str, Window] = {}
    weight = 1 - (now % MINUTE) / MINUTE
    for rule, value, prev in zip(rules, values, previous, strict=False):
        remaining = max(rule.limit - value - math.floor(prev * weight), 0)  # limit - count(...)
        known = out.get(rule.what)
        if known is None or remaining < known.remaining:
            out[rule.what] = Window(rule.limit, remaining, reset_in(value, prev, now))
    return out


# The milliseconds of a second as a duration spells them after the seconds: "", ".5", ".25", ".125";
# and the whole seconds of the first ten minutes before them: "37", "1m37".
_FRACTIONS = ("", *(f".{ms:03d}".rstrip("0") for ms in range(1, 1000)))
_WHOLE = tuple(str(s) if s < MINUTE else f"{s // MINUTE}m{s % MINUTE}" for s in range(10 * MINUTE))


def duration(seconds: float) -> str:
    """OpenAI's spelling of a reset time: ``20ms``, ``1.5s``, ``6m0s`` (to the millisecond)."""
    if seconds < 1:
        return f"{max(math.ceil(seconds * 1000), 1)}ms"
    # The seconds to the millisecond without trailing zeros, in integers (a float's ``:g`` took
    # twice as long, for each of a call's two reset headers).
    whole, ms = divmod(round(seconds * 1000), 1000)
    if whole < 10 * MINUTE:
        return f"{_WHOLE[whole]}{_FRACTIONS[ms]}s"
    minutes, whole = divmod(whole, 60)
    return f"{minutes}m{whole}{_FRACTIONS[ms]}s"


def headers(found: dict[str, Window]) -> dict[str, str]:
    out = {}
    for what, w in found.items():
        limit, remaining, reset = HEADERS[what]
        out[limit] = str(w.limit)
        out[remaining] = str(w.remaining)
        out[reset] = duration(w.reset)
    return out


# What an admitted call's headers compare for one kind: its header names, and each of its limits'
# index among the call's checks, its limit and the limit's header as the response holds it.
HeaderKind = tuple[tuple[str, str, str], tuple[tuple[int, int, tuple[str, str]], ...]]


def header_kinds(rules: list[Rule]) -> tuple[HeaderKind, ...]:
    """What ``admitted_headers`` compares for ``rules`` (worked out once per key and minute)."""
    kinds: dict[str, list[tuple[int, int, tuple[str, str]]]] = {}
    for i, rule in enumerate(rules):
        kinds.setdefault(rule.what, []).append((i, rule.limit, (HEADERS[rule.what][0], str(rule.limit))))
    return tuple((HEADERS[what], tuple(found)) for what, found in kinds.items())


_MORE = 1 << 63


def admitted_headers(kinds: tuple[HeaderKind, ...], values: Sequence[int], previous: Sequence[int],
                     now: float) -> dict[str, tuple[str, str]]:
    """``headers(windows(...))`` of an admitted call in one pass: for each kind, the limit with the
    least remaining, and when that one is back to its initial state (worked out only for it).
    Each header as Django's header store holds it: its lower-case name → ``(name, value)``.

    Every call pays for this, so ``count`` and ``reset_in`` are written out here, and a previous
    minute with nothing counted (the usual case) costs no multiplication."""
    into = now % MINUTE
    weight = 1 - into / MINUTE
    floor = math.floor
    out = {}
    for (limit_name, remaining_name, reset_name), candidates in kinds:
        least = _MORE  # more than any limit leaves: the first candidate is taken
        for i, limit, header in candidates:
            before = previous[i]
            remaining = limit - values[i] - floor(before * weight) if before else limit - values[i]
            if remaining < 0:  # as ``windows``: spent limits tie, and the first of them is reported
                remaining = 0
            if remaining < least:
                least, at, limit_header = remaining, i, header
        value = values[at]
        if value > 0:  # ``reset_in``
            reset = MINUTE - into + MINUTE * (1 - 1 / value)
        else:
            before = previous[at]
            reset = max(MINUTE * (1 - 1 / before) - into, 0.0) if before > 0 else 0.0
        out[limit_name] = limit_header
        out[remaining_name] = (remaining_name, str(least))
        out[reset_name] = (reset_name, duration(reset))
    return out


def refusal(rule: Rule, need: int, value: int, previous: int, now: float,
            found: dict[str, Window]) -> LimitExceeded:
    """The 429 of a call needing ``need`` that ``rule`` refused (``value`` / ``previous``: the
    counters as found); ``retry_after``: whole seconds until such a call would fit (at least 1)."""
    used = count(value, previous, now)
    retry = int(wait_for(need, rule.limit, value, previous, now)) + 1  # the first whole second after
    where = f" for model '{rule.scope}'" if rule.scope else ""
    message = (f"rate limit reached: {rule.limit} {rule.what} per minute{where} for this API key "
               f"(used {min(used, rule.limit)} in the last minute); try again in {retry}s")
    found = {**found, rule.what: Window(rule.limit, max(rule.limit - used, 0), reset_in(value, previous, now))}
    return LimitExceeded(message, code="rate_limit_exceeded", retry_after=retry,
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
