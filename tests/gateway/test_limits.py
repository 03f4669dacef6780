"""Rate limits on their own: which counters a call touches, OpenAI's header spelling, and the
refusal a client sees."""

from __future__ import annotations

from studio.core.entries import LimitEntry, Snapshot
from studio.core.errors import LimitExceeded
from studio.core.principal import Principal
from studio.gateway import limits, terms

NOW = 1_000_000 * 60 + 45.0  # 45 s into a minute


def test_key_wide_and_per_model_limits_both_apply():
    snap = Snapshot(limits={(10, ""): LimitEntry(rpm=5), (10, "m"): LimitEntry(rpm=2), (11, ""): LimitEntry(rpm=9)})
    assert limits.entries_for(snap, Principal(user_id=1, key_id=10), "m") == [("", LimitEntry(rpm=5)),
                                                                             ("m", LimitEntry(rpm=2))]
    assert limits.entries_for(snap, Principal(user_id=1, key_id=10), "other") == [("", LimitEntry(rpm=5))]
    assert limits.entries_for(snap, Principal(user_id=1), "m") == []  # a studio user has no key limits


def checks(entry: LimitEntry, *, tokens: int, images: int, now: float = NOW) -> tuple[terms.Terms, list]:
    snap = Snapshot(limits={(10, ""): entry})
    found = terms.terms_for(snap, Principal(user_id=1, key_id=10), "m", now)
    assert found is not None
    shape = found.shape(images)
    return found, found.checks(shape, tokens=tokens, images=images, reserve_nano=0, now=now)


def test_checks_count_requests_tokens_and_images_in_this_minutes_window_weighing_the_last():
    found, made = checks(LimitEntry(rpm=5, tpm=100, ipm=3), tokens=40, images=2)
    assert [(r.what, r.limit) for r in found.shape(2).rules] == [("requests", 5), ("tokens", 100), ("images", 3)]
    assert [c.add for c in made] == [1, 40, 2]
    assert len({c.key for c in made}) == 3 and found.token_keys == (made[1].key,)
    _, later = checks(LimitEntry(rpm=5), tokens=0, images=0, now=NOW + 60)
    assert later[0].key != made[0].key  # a new minute, a new counter
    assert later[0].previous == made[0].key  # ...and the old one still counts
    assert made[0].weight == 0.25  # 45 s into the minute: a quarter of the last one is inside


def test_a_call_bigger_than_the_token_limit_needs_only_an_empty_window():
    _, made = checks(LimitEntry(tpm=100), tokens=500, images=0)
    assert (made[0].need, made[0].add) == (100, 500)


def test_a_text_call_does_not_touch_the_image_limit():
    _, made = checks(LimitEntry(ipm=3), tokens=10, images=0)
    assert made == []


def test_headers_report_the_tightest_window():
    rules = [limits.Rule("requests", 5, ""), limits.Rule("requests", 2, "m")]
    found = limits.windows(rules, (3, 1), (0, 0), NOW)
    assert limits.headers(found) == {"x-ratelimit-limit-requests": "2", "x-ratelimit-remaining-requests": "1",
                                     "x-ratelimit-reset-requests": "15s"}


def test_durations_in_openais_spelling():
    assert limits.duration(0.0201) == "21ms"
    assert limits.duration(1.5) == "1.5s"
    assert limits.duration(360) == "6m0s"
    assert limits.duration(97.1234) == "1m37.123s"  # to the millisecond
    assert limits.duration(119.9999) == "2m0s"  # a rounded-up minute carries: never "1m60s"


def test_every_millisecond_of_three_minutes_is_spelled_as_whole_seconds_and_a_trimmed_fraction():
    def spelled(ms: int) -> str:
        whole, part = divmod(ms, 1000)
        return str(whole) if part == 0 else f"{whole}.{part:03d}".rstrip("0")

    for ms in [*range(1000, 180_000), 3_599_999, 3_600_000, 86_400_123]:
        minutes, rest = divmod(ms, 60_000)
        expected = f"{minutes}m{spelled(rest)}s" if minutes else f"{spelled(rest)}s"
        assert limits.duration(ms / 1000) == expected, ms


def test_an_admitted_calls_headers_are_those_of_its_windows():
    rules = [limits.Rule("requests", 5, ""), limits.Rule("tokens", 900, ""), limits.Rule("requests", 2, "m"),
             limits.Rule("tokens", 100, "m")]
    for values, previous in (((3, 40, 1, 30), (0, 0, 0, 0)), ((1, 10, 1, 10), (4, 600, 1, 80)), ((0,) * 4, (0,) * 4),
                             ((8, 950, 7, 120), (0, 0, 0, 0))):  # both limits of each kind spent: the first reported
        expected = limits.headers(limits.windows(rules, values, previous, NOW))
        assert _values(limits.admitted_headers(limits.header_kinds(rules), values, previous, NOW)) == expected


def _values(held: dict[str, tuple[str, str]]) -> dict[str, str]:
    """An admitted call's headers as names and values (each held as its name and value)."""
    assert all(pair[0] == name for name, pair in held.items())
    return {name: value for name, (_, value) in held.items()}


def test_admitted_headers_match_their_windows_at_any_count_and_moment():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    rules = [limits.Rule("requests", 50, ""), limits.Rule("tokens", 9_000, ""), limits.Rule("requests", 20, "m"),
             limits.Rule("tokens", 1_000, "m")]
    counts = st.tuples(st.integers(0, 60), st.integers(0, 10_000), st.integers(0, 30), st.integers(0, 1_500))

    @settings(max_examples=400, deadline=None)
    @given(counts, counts, st.floats(0, 59.999))
    def check(values, previous, into):
        now = 1_000_000 * 60 + into
        expected = limits.headers(limits.windows(rules, values, previous, now))
        assert _values(limits.admitted_headers(limits.header_kinds(rules), values, previous, now)) == expected

    check()


def test_sliding_count_remaining_and_reset():
    # 45 s into a minute: 8 of this minute, 20 of the last one (a quarter of it still inside).
    found = limits.windows([limits.Rule("requests", 20, "")], (8,), (20,), NOW)
    assert limits.headers(found) == {"x-ratelimit-limit-requests": "20", "x-ratelimit-remaining-requests": "7",
                                     "x-ratelimit-reset-requests": "1m7.5s"}  # when the 8 are under 1
    nothing_now = limits.windows([limits.Rule("requests", 20, "")], (0,), (3,), NOW)  # 3 x 1/4: under one
    assert nothing_now["requests"].remaining == 20 and nothing_now["requests"].reset == 0


def test_refusal_names_the_limit_and_carries_headers_and_retry_after():
    error = limits.refusal(limits.Rule("tokens", 100, "m"), 100, 130, 0, NOW, {})
    # 130 of this minute: a 100-token call fits once all but 1 of them have slid out of the window.
    assert isinstance(error, LimitExceeded) and error.status == 429 and error.retry_after == 75
    assert "100 tokens per minute for model 'm'" in error.message
    assert error.details["headers"]["x-ratelimit-remaining-tokens"] == "0"


def test_retry_after_is_when_the_previous_minute_has_slid_out_enough():
    # 45 s in: 2 this minute, 16 in the last (4 still count), limit 6: one more fits once under 4.
    error = limits.refusal(limits.Rule("requests", 6, ""), 1, 2, 16, NOW, {})
    assert error.retry_after == 1  # at least a second, even when the wait is shorter
    error = limits.refusal(limits.Rule("requests", 5, ""), 1, 5, 0, NOW, {})
    assert error.retry_after == 16  # the minute turns in 15 s; the 5 must slide below 5


def test_video_slots_per_scope():
    entries = [("", LimitEntry(concurrent_videos=2)), ("m", LimitEntry(rpm=1))]
    assert limits.video_slot(entries, 10) == [("vs:10:*", 2, "")]
    assert "at most 2 video tasks" in limits.video_refusal(2, "").message
