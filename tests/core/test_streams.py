"""Closing a stream left before its end: its clean-up runs at once."""

from __future__ import annotations

from studio.core import streams


async def test_a_generator_left_mid_way_runs_its_clean_up_when_closed():
    cleaned = []

    async def numbers():
        try:
            for n in range(10):
                yield n
        finally:
            cleaned.append("done")

    source = numbers()
    async for n in source:
        if n == 2:
            break
    assert cleaned == []  # leaving the loop alone does not close it
    await streams.close(source)
    assert cleaned == ["done"]
    await streams.close(source)  # closing it again does nothing
    assert cleaned == ["done"]


async def test_an_iterator_that_is_not_a_generator_is_left_as_it_is():
    class Countdown:
        def __init__(self) -> None:
            self.left = 3

        def __aiter__(self):
            return self

        async def __anext__(self) -> int:
            if not self.left:
                raise StopAsyncIteration
            self.left -= 1
            return self.left

    source = Countdown()
    assert await anext(source) == 2
    await streams.close(source)
    assert [n async for n in source] == [1, 0]
