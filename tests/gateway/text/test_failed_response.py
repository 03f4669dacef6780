"""A broken responses stream's ``response.failed`` carries the id its ``response.created`` announced."""

from __future__ import annotations

import pytest

from studio.gateway.text.failed_response import announced_id


@pytest.mark.parametrize(("created", "expected"), [
    (b'{"type":"response.created","response":{"id":"resp_1","status":"in_progress"}}', "resp_1"),
    (b"", None),  # the stream broke before its response.created
    (b'{"type":"response.created","response":{"status":"in_progress"}}', None),
    (b'{"type":"response.created","response":"resp_1"}', None),
    (b"[1, 2]", None),
    (b"{not json", None),
])
def test_the_announced_id_is_read_from_the_created_event(created, expected):
    assert announced_id(created) == expected
