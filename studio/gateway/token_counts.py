"""Reading a count out of an upstream's usage object (tokens, images).

Each vendor gives its counts as JSON numbers. One that is not a whole number from 0 to
``MOST`` (a string of words, a list, a negative or overflowing number) cannot be billed or
written to a usage row: it is the upstream's fault (``UnreadableAnswer``, a 502), never a
gateway error, a wrong charge, or a record the recorder would try to write again and again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from studio.core.errors import UnreadableAnswer

MOST = 2**31 - 1  # a usage row's integer columns hold no more


def count(usage: Mapping[str, Any], name: str, where: str = "usage") -> int:
    """``usage[name]`` as a count (0 when absent, null or an empty text); ``where`` names ``usage``
    in the error."""
    value = usage.get(name)
    if type(value) is int and 0 <= value <= MOST:
        return value
    if value is None or value == "":
        return 0
    if isinstance(value, int | float | str):  # 12.0 and "12" are taken, as ``int`` takes them
        try:
            number = int(value)
        except (ValueError, OverflowError):
            number = -1
        if 0 <= number <= MOST:
            return number
    raise UnreadableAnswer(f"the upstream's {where}.{name} is not a count of the protocol's kind: {str(value)[:40]}")
