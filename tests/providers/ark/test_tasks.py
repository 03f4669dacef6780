"""The Ark Seedance task adapter against a fake vendor built from reference §4."""

from __future__ import annotations

import pytest

from studio.core.errors import BadRequest, RateLimited, UnreadableAnswer, UpstreamError, UpstreamRejected
from studio.providers.ark.provider import ArkProvider
from studio.providers.ark.tasks import ark_video_state
from tests.providers.video_fakes import mount_vendors, upstream

BASE = "https://ark.fake.test"
TASKS = "/api/v3/contents/generations/tasks"


@pytest.fixture
def vendor():
    yield from mount_vendors(BASE)


def provider() -> ArkProvider:
    return ArkProvider(upstream("ark", BASE, "ark-secret", id=1))


async def test_create_posts_body_with_bearer_and_returns_task_id(vendor):
    fake = vendor({("POST", TASKS): (200, {"id": "cgt-20260514183217-t8rzv"})})
    body = {"model": "doubao-seedance-2-0-260128", "content": [{"type": "text", "text": "cat"}], "x_extra": 1}
    assert await provider().video_create(body) == "cgt-20260514183217-t8rzv"
    sent = fake.requests[0]
    assert sent["headers"]["authorization"] == "Bearer ark-secret"
    assert sent["headers"]["content-type"] == "application/json"
    assert sent["json"] == body


async def test_get_and_normalize_success_record(vendor):
    record = {"id": "cgt-1", "model": "m", "status": "succeeded",
              "content": {"video_url": "https://cdn/x.mp4", "last_frame_url": "https://cdn/x.png"},
              "usage": {"completion_tokens": 108900, "total_tokens": 108900}, "framespersecond": 24}
    vendor({("GET", f"{TASKS}/cgt-1"): (200, record)})
    p = provider()
    state = p.video_state(await p.video_get("cgt-1"))
    assert state.status == "succeeded" and state.terminal
    assert state.video_url == "https://cdn/x.mp4" and state.last_frame_url == "https://cdn/x.png"


@pytest.mark.parametrize("raw, normalized", [
    ("queued", "queued"), ("running", "running"), ("failed", "failed"), ("expired", "expired"),
    ("cancelled", "cancelled"), ("pending", "queued"), ("processing", "running"), ("mystery", "running"),
])
def test_status_normalization_is_tolerant(raw, normalized):
    assert ark_video_state({"status": raw}).status == normalized


def test_failed_record_error_fields():
    state = ark_video_state({"status": "failed", "error": {"code": "OutputVideoSensitiveContentDetected",
                                                                  "message": "blocked"}})
    assert (state.error_code, state.error_message) == ("OutputVideoSensitiveContentDetected", "blocked")


async def test_error_bodies_become_typed_errors(vendor):
    vendor({
        ("POST", TASKS): (400, {"error": {"code": "InvalidParameter", "message": "bad ratio", "param": "ratio",
                                          "type": "BadRequest"}}),
        ("GET", f"{TASKS}/cgt-x"): (429, {"error": {"code": "RateLimitExceeded", "message": "slow down",
                                                    "type": "TooManyRequests"}}),
        ("DELETE", f"{TASKS}/cgt-x"): (500, {"error": {"code": "InternalServiceError", "message": "boom"}}),
    })
    p = provider()
    with pytest.raises(UpstreamRejected) as info:
        await p.video_create({"model": "m", "content": []})
    assert info.value.param == "ratio" and info.value.code == "InvalidParameter" and info.value.status == 400
    with pytest.raises(RateLimited):
        await p.video_get("cgt-x")
    with pytest.raises(UpstreamError):
        await p.video_cancel("cgt-x")


@pytest.mark.parametrize(("answer", "found"), [
    ({"unexpected": True}, "none"), ({"id": ""}, "none"), ({"id": 42}, "a int"), ({"id": ["cgt-1"]}, "a list"),
    (["cgt-1"], "none"), (b"<html>accepted</html>", "none"),
])
async def test_an_accepted_create_without_a_readable_id_is_unreadable_and_not_retried(vendor, answer, found):
    vendor({("POST", TASKS): (200, answer)})
    with pytest.raises(UnreadableAnswer) as info:
        await provider().video_create({"model": "m"})
    assert not info.value.retryable and info.value.param == "id"  # another upstream could make it twice
    assert f"'id' ({found})" in info.value.message


def test_unknown_and_missing_states_keep_the_task_alive():
    assert ark_video_state({"status": "Rendering"}).status == "running"
    assert ark_video_state({}).status == "queued"
    assert ark_video_state({"status": "SUCCEEDED"}).status == "succeeded"


async def test_a_posted_callback_is_read_like_a_queried_record():
    posted = provider().parse_callback({"id": "cgt-9", "status": "succeeded",
                                        "content": {"video_url": "https://ark-result/v.mp4"}})
    assert posted.upstream_task_id == "cgt-9"
    assert posted.state.status == "succeeded" and posted.state.video_url == "https://ark-result/v.mp4"


@pytest.mark.parametrize("payload", [{"status": "succeeded"}, {"id": ""}, ["cgt-9"], {"id": 7}])
async def test_a_callback_without_a_task_id_is_a_bad_request(payload):
    with pytest.raises(BadRequest) as caught:
        provider().parse_callback(payload)
    assert caught.value.param == "id"


async def test_a_task_the_upstream_does_not_know_reads_as_failed(vendor):
    vendor({("GET", f"{TASKS}/cgt-gone"): (404, {"error": {"code": "ResourceNotFound", "type": "NotFound",
                                                            "message": "the specified task is not found"}})})
    p = provider()
    state = p.video_state(await p.video_get("cgt-gone"))
    assert state.terminal and state.status == "failed" and state.error_code == "TaskNotFound"


@pytest.mark.parametrize(("record", "field"), [
    ({"status": ["succeeded"]}, "status"),
    ({"status": 3}, "status"),
    ({"status": "succeeded", "content": {"video_url": ["https://ark-result/v.mp4"]}}, "content.video_url"),
    ({"status": "succeeded", "content": {"video_url": "https://r/v.mp4", "last_frame_url": 5}},
     "content.last_frame_url"),
])
def test_a_record_whose_state_or_address_is_no_string_is_unreadable(record, field):
    with pytest.raises(UnreadableAnswer) as caught:
        ark_video_state(record)
    assert caught.value.param == field and f"'{field}'" in caught.value.message
    assert not caught.value.retryable


async def test_a_posted_record_of_the_wrong_shape_is_a_bad_request_naming_the_field():
    with pytest.raises(BadRequest) as caught:
        provider().parse_callback({"id": "cgt-9", "status": {"state": "succeeded"}})
    assert caught.value.param == "status" and caught.value.status == 400


async def test_a_query_answer_that_is_json_but_no_object_is_unreadable_and_one_not_json_a_passing_fault(vendor):
    fake = vendor({("GET", f"{TASKS}/cgt-list"): (200, ["cgt-list"]),
                   ("GET", f"{TASKS}/cgt-html"): (200, b"<html>bad gateway</html>")})
    with pytest.raises(UnreadableAnswer):
        await provider().video_get("cgt-list")
    with pytest.raises(UpstreamError) as caught:
        await provider().video_get("cgt-html")
    assert not isinstance(caught.value, UnreadableAnswer) and caught.value.retryable
    assert len(fake.requests) == 2
