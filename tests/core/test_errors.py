"""The typed errors and how an upstream's HTTP status becomes one."""

from __future__ import annotations

import pytest

from studio.core import errors
from studio.core.errors import (
    BadRequest,
    CapabilityMissing,
    QuotaExceeded,
    RateLimited,
    UpstreamError,
    UpstreamRejected,
    UpstreamTimeout,
    UpstreamUnavailable,
    from_upstream_status,
)


@pytest.mark.parametrize(("status", "kind", "client_status", "retryable"), [
    (429, RateLimited, 429, True),
    (401, UpstreamError, 502, True),
    (403, UpstreamError, 502, True),
    (404, UpstreamError, 502, True),
    (408, UpstreamTimeout, 504, True),
    (504, UpstreamTimeout, 504, True),
    (502, UpstreamUnavailable, 503, True),
    (503, UpstreamUnavailable, 503, True),
    (529, UpstreamUnavailable, 503, True),
    (400, UpstreamRejected, 400, False),
    (422, UpstreamRejected, 400, False),
    (413, UpstreamRejected, 413, False),
    (500, UpstreamError, 502, True),
])
def test_upstream_status_maps_to_a_typed_error(status, kind, client_status, retryable):
    error = from_upstream_status(status, "vendor said no", param="prompt")
    assert type(error) is kind
    assert error.status == client_status and error.retryable is retryable
    assert error.param == "prompt" and "vendor said no" in error.message


def test_the_gateways_own_credential_is_not_blamed_on_the_client():
    error = from_upstream_status(401, "bad key")
    assert "credential" in error.message and error.status >= 500


def test_capability_missing_is_a_bad_request_naming_the_model():
    error = CapabilityMissing("model 'x' cannot do that")
    assert isinstance(error, BadRequest)
    assert (error.status, error.param, error.code) == (400, "model", "model_not_supported")


def test_a_budget_stop_is_a_429_that_must_not_be_retried_elsewhere():
    error = QuotaExceeded("budget spent", details={"budget": "key", "resets_at": None})
    assert error.status == 429 and not error.retryable and error.details["budget"] == "key"


def test_explicit_status_overrides_the_class_default():
    assert errors.GatewayError("x", status=418).status == 418
    assert errors.GatewayError("x").status == 500


def test_an_unreadable_answer_is_a_502_that_is_not_retried_and_logs_its_cause(caplog):
    try:
        {}["choices"]
    except KeyError as exc:
        error = errors.unreadable(exc, "stream")
    assert isinstance(error, errors.UnreadableAnswer) and isinstance(error, UpstreamError)
    assert error.status == 502 and not error.retryable
    assert "the upstream's stream does not have the shape its protocol gives it" in error.message
    assert "KeyError" not in error.message  # the client is told what went wrong, not how the reading failed
    assert any(record.exc_info and record.exc_info[0] is KeyError for record in caplog.records)


def _read_choices(answer: dict) -> object:
    return answer["choices"]


def test_an_unreadable_answer_met_again_at_the_same_place_is_logged_in_one_line(caplog):
    def meet(answer: dict, what: str = "answer") -> None:
        try:
            _read_choices(answer)
        except KeyError as exc:
            errors.unreadable(exc, what)

    for _ in range(3):
        meet({})
    traced = [r for r in caplog.records if r.exc_info]
    assert len(traced) == 1 and len(caplog.records) == 3
    assert "KeyError" in caplog.records[-1].getMessage() and "'choices'" in caplog.records[-1].getMessage()
    meet({}, "stream")  # another reading: its own traceback
    assert len([r for r in caplog.records if r.exc_info]) == 2
