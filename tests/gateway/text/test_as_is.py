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
