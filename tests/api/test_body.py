"""A JSON answer made directly is the ``HttpResponse`` Django's constructor makes."""

from __future__ import annotations

import pytest
from django.http import HttpResponse

from api.body import JsonAnswer, json_response


@pytest.mark.parametrize("status", [200, 201, 429, 599])
def test_a_json_answer_is_the_response_django_makes(status):
    content = b'{"id":"chatcmpl-1","choices":[]}'
    ours, theirs = JsonAnswer(content, status), HttpResponse(content, status=status, content_type="application/json")
    assert type(ours).__mro__[1:] == type(theirs).__mro__
    assert vars(ours).keys() == vars(theirs).keys()
    for name, value in vars(theirs).items():
        if name not in ("headers", "cookies"):
            assert getattr(ours, name) == value, name
    assert list(ours.headers.items()) == list(theirs.headers.items())
    assert ours.serialize() == theirs.serialize() and ours.reason_phrase == theirs.reason_phrase
    ours["x-extra"] = theirs["x-extra"] = "1"  # and it is used as one
    ours.write(b" ")
    theirs.write(b" ")
    assert ours.content == theirs.content and list(ours.items()) == list(theirs.items())


def test_a_status_outside_http_is_refused():
    with pytest.raises(ValueError, match="100 to 599"):
        JsonAnswer(b"{}", 600)


def test_json_response_serializes_the_value():
    response = json_response({"a": [1, 2]}, 404)
    assert (response.status_code, response.content, response["Content-Type"]) == (404, b'{"a":[1,2]}',
                                                                                   "application/json")
