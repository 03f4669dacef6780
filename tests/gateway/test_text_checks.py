"""NUL characters are refused before any upstream call, naming the field."""

from __future__ import annotations

import orjson
import pytest

from studio.core.errors import BadRequest
from studio.gateway.text_checks import refuse_nul


def test_clean_bodies_pass_with_or_without_raw_bytes():
    body = {"contents": [{"parts": [{"text": "a fox \t\n in snow"}]}], "n": 1}
    refuse_nul(body, orjson.dumps(body))
    refuse_nul(body)


@pytest.mark.parametrize(("body", "param"), [
    ({"prompt": "a\u0000b"}, "prompt"),
    ({"contents": [{"parts": [{"text": "ok"}, {"text": "x\u0000"}]}]}, "contents[0].parts[1].text"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": "\u0000"}]}]},
     "messages[0].content[0].text"),
    ({"metadata": {"bad\u0000key": 1}}, "metadata.bad\u0000key"),
])
def test_the_first_field_with_a_nul_is_named(body, param):
    with pytest.raises(BadRequest) as caught:
        refuse_nul(body, orjson.dumps(body))
    assert caught.value.param == param and caught.value.status == 400


def test_an_escaped_backslash_u0000_is_plain_text_not_a_nul():
    body = {"prompt": "write \\u0000 literally"}
    raw = orjson.dumps(body)
    assert b"\\u0000" in raw  # the fast check sees it; the walk finds no NUL
    refuse_nul(body, raw)
