"""A bounded memo gives ``make(key)`` for every key, keeping at most ``kept`` of them."""

from __future__ import annotations

from studio.core.memo import Memo


def test_a_key_is_worked_out_once_while_there_is_room_and_every_time_after():
    made = []
    memo = Memo(lambda key: made.append(key) or key.upper(), kept=2)
    keys = ["a", "b", "a", "c", "c", "b"]
    assert [memo[key] for key in keys] == ["A", "B", "A", "C", "C", "B"]
    assert made == ["a", "b", "c", "c"]  # "c" came once the memo was full: worked out each time
    assert memo == {"a": "A", "b": "B"}


def test_a_falsy_or_none_value_is_kept_too():
    made = []
    memo = Memo(lambda key: made.append(key) or None)
    assert memo["x"] is None and memo["x"] is None
    assert made == ["x"]
