"""A count read from an upstream's usage: a whole number the usage row can hold, or the upstream's fault."""

from __future__ import annotations

import pytest

from studio.core.errors import UnreadableAnswer
from studio.gateway.token_counts import MOST, count


@pytest.mark.parametrize(("value", "expected"), [
    (12, 12), (0, 0), (None, 0), ("", 0), (12.0, 12), ("12", 12), (True, 1), (MOST, MOST),
])
def test_a_count_of_the_protocols_kind_is_read(value, expected):
    assert count({"tokens": value}, "tokens") == expected


def test_an_absent_count_is_zero():
    assert count({}, "tokens") == 0


@pytest.mark.parametrize("value", ["x", [], [1], {}, {"a": 1}, -1, MOST + 1, 10**30, 1e300, 1.5e10, "-3"])
def test_anything_else_is_the_upstreams_fault_naming_the_field(value):
    with pytest.raises(UnreadableAnswer) as caught:
        count({"tokens": value}, "tokens", "usageMetadata")
    assert caught.value.status == 502
    assert "usageMetadata.tokens" in caught.value.message
