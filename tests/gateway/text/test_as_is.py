"""Which named events a relay sends as they came, by format, however many names a stream uses."""

from __future__ import annotations

import pytest

from studio.gateway.text import as_is


@pytest.mark.parametrize(("fmt", "name", "verdict"), [
    ("messages", "content_block_delta", True), ("messages", "message_stop", True), ("messages", "ping", True),
    ("messages", "message_start", False), ("messages", "message_delta", False), ("messages", "error", False),
    ("responses", "response.output_text.delta", True), ("responses", "response.output_item.added", True),
    ("responses", "response.content_part.done", True), ("responses", "response.created", False),
    ("responses", "response.completed", False), ("responses", "error", False),
    ("responses", "response.output_text.délta", False),  # not ASCII: looked at, whatever it ends with
    ("responses", "réponse.delta", False), ("messages", "pïng", False),
])
def test_a_name_goes_as_it_came_by_its_format(fmt, name, verdict):
    verdicts = as_is.BY_FORMAT[fmt]
    assert verdicts[name] is verdict
    assert verdicts[name] is verdict  # asked again, once kept


def test_past_the_names_kept_each_is_still_judged():
    verdicts = as_is.Verdicts(lambda name: name.endswith(".delta"))
    names = [f"x{n}.delta" for n in range(as_is.NAMES_KEPT + 50)] + [f"x{n}.other" for n in range(50)]
    assert [verdicts[name] for name in names] == [True] * (as_is.NAMES_KEPT + 50) + [False] * 50
    assert len(verdicts) == as_is.NAMES_KEPT
