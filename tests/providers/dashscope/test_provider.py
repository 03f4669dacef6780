"""The DashScope video synthesis adapter against a fake vendor built from reference §5."""

from __future__ import annotations

import pytest

from studio.core.errors import BadRequest, UnreadableAnswer, UpstreamError, UpstreamRejected
from studio.providers.dashscope.provider import DashScopeProvider, dashscope_video_state
from tests.providers.video_fakes import mount_vendors, upstream

BASE = "https://dashscope.fake.test"
SYNTHESIS = "/api/v1/services/aigc/video-generation/video-synthesis"


@pytest.fixture
def vendor():
    yield from mount_vendors(BASE)


def provider() -> DashScopeProvider:
    return DashScopeProvider(upstream("dashscope", BASE, "sk-1", id=2))


async def test_create_sends_async_header_and_returns_task_id(vendor):
    fake = vendor({("POST", SYNTHESIS): (200, {"output": {"task_id": "b3be072e", "task_status": "PENDING"},
                                               "request_id": "8a93"})})
    body = {"model": "wan2.7-t2v", "input": {"prompt": "rain"}, "parameters": {"resolution": "720P"}}
    assert await provider().video_create(body) == "b3be072e"
    sent = fake.requests[0]
    assert sent["headers"]["x-dashscope-async"] == "enable"
    assert sent["headers"]["authorization"] == "Bearer sk-1"
    assert sent["json"] == body


async def test_query_success_record(vendor):
    record = {"request_id": "2ca1", "output": {
        "task_id": "af6e", "task_status": "SUCCEEDED", "submit_time": "2025-09-25 11:07:28.590",
        "end_time": "2025-09-25 11:17:11.650", "video_url": "https://dashscope-result/x.mp4?Expires=1"},
        "usage": {"duration": 15, "input_video_duration": 0, "output_video_duration": 15, "video_count": 1, "SR": 720}}
    fake = vendor({("GET", "/api/v1/tasks/af6e"): (200, record)})
    p = provider()
    state = p.video_state(await p.video_get("af6e"))
    assert state.status == "succeeded" and state.video_url.startswith("https://dashscope-result/")
    assert fake.requests[0]["path"] == "/api/v1/tasks/af6e"


@pytest.mark.parametrize("raw, normalized", [
    ("PENDING", "queued"), ("RUNNING", "running"), ("SUSPENDED", "queued"), ("FAILED", "failed"),
    ("CANCELED", "cancelled"), ("UNKNOWN", "unknown"),
])
def test_status_normalization(raw, normalized):
    assert dashscope_video_state({"output": {"task_status": raw}}).status == normalized


def test_failure_code_read_from_output_or_top_level():
    official = dashscope_video_state({"output": {"task_status": "FAILED", "code": "InvalidParameter",
                                                  "message": "bad"}})
    relayed = dashscope_video_state({"code": "DataInspectionFailed", "message": "m",
                                      "output": {"task_status": "FAILED"}})
    assert (official.error_code, official.error_message) == ("InvalidParameter", "bad")
    assert relayed.error_code == "DataInspectionFailed"


async def test_errors_without_wrapper_become_typed_errors(vendor):
    vendor({("POST", SYNTHESIS): (400, {"request_id": "r", "code": "InvalidParameter", "message": "bad size"}),
            ("GET", "/api/v1/tasks/t"): (401, {"request_id": "r", "code": "InvalidApiKey",
                                               "message": "Invalid API-key provided."})})
    p = provider()
    with pytest.raises(UpstreamRejected) as info:
        await p.video_create({"model": "m"})
    assert info.value.code == "InvalidParameter" and "bad size" in info.value.message
    with pytest.raises(UpstreamError):
        await p.video_get("t")


@pytest.mark.parametrize("answer", [
    {"request_id": "r"}, {"output": {"task_status": "PENDING"}}, {"output": {"task_id": 7}},
    {"output": "b3be072e"}, b"accepted",
])
async def test_an_accepted_create_without_a_readable_task_id_is_unreadable_and_not_retried(vendor, answer):
    vendor({("POST", SYNTHESIS): (200, answer)})
    with pytest.raises(UnreadableAnswer) as info:
        await provider().video_create({"model": "m"})
    assert not info.value.retryable and info.value.param == "output.task_id"


async def test_cancel_posts_to_cancel_path(vendor):
    fake = vendor({("POST", "/api/v1/tasks/t/cancel"): (200, {"request_id": "r"})})
    await provider().video_cancel("t")
    assert fake.requests[0]["method"] == "POST"


def test_unknown_and_missing_states_keep_the_task_alive():
    assert dashscope_video_state({"output": {"task_status": "QUEUEING"}}).status == "running"
    assert dashscope_video_state({"output": {}}).status == "queued"
    assert dashscope_video_state({"output": {"task_status": "succeeded"}}).status == "succeeded"


async def test_dashscope_takes_no_callbacks():
    assert DashScopeProvider.callback_field is None
    with pytest.raises(BadRequest):
        provider().parse_callback({"output": {"task_id": "t", "task_status": "SUCCEEDED"}})


async def test_first_last_frame_models_use_the_image2video_path(vendor):
    keyframes = "/api/v1/services/aigc/image2video/video-synthesis"
    fake = vendor({("POST", keyframes): (200, {"output": {"task_id": "kf-1", "task_status": "PENDING"},
                                               "request_id": "r"})})
    body = {"model": "wanx2.1-kf2v-plus", "input": {"first_frame_url": "https://x/a.png",
                                                    "last_frame_url": "https://x/b.png"}}
    assert await provider().video_create(body) == "kf-1"
    assert fake.requests[0]["path"] == keyframes


async def test_cancel_posts_to_the_tasks_cancel_path(vendor):
    fake = vendor({("POST", "/api/v1/tasks/t-1/cancel"): (200, {"request_id": "r"})})
    await provider().video_cancel("t-1")
    assert fake.requests[0]["method"] == "POST" and fake.requests[0]["path"] == "/api/v1/tasks/t-1/cancel"


async def test_cancel_refused_by_the_vendor_is_a_typed_rejection(vendor):
    vendor({("POST", "/api/v1/tasks/t-2/cancel"): (400, {"request_id": "r", "code": "UnsupportedOperation",
                                                         "message": "only PENDING tasks can be canceled"})})
    with pytest.raises(UpstreamRejected) as info:
        await provider().video_cancel("t-2")
    assert info.value.code == "UnsupportedOperation"


@pytest.mark.parametrize(("output", "field"), [
    ({"task_status": ["SUCCEEDED"]}, "output.task_status"),
    ({"task_status": "SUCCEEDED", "video_url": {"url": "https://r/v.mp4"}}, "output.video_url"),
])
def test_a_record_whose_state_or_address_is_no_string_is_unreadable(output, field):
    with pytest.raises(UnreadableAnswer) as caught:
        dashscope_video_state({"request_id": "r", "output": output})
    assert caught.value.param == field and not caught.value.retryable


async def test_a_query_answer_that_is_json_but_no_record_is_unreadable_and_one_not_json_a_passing_fault(vendor):
    tasks = "/api/v1/tasks"
    vendor({("GET", f"{tasks}/t-list"): (200, ["t-list"]), ("GET", f"{tasks}/t-empty"): (200, {}),
            ("GET", f"{tasks}/t-html"): (200, b"<html>bad gateway</html>")})
    for task_id in ("t-list", "t-empty"):
        with pytest.raises(UnreadableAnswer):
            await provider().video_get(task_id)
    with pytest.raises(UpstreamError) as caught:
        await provider().video_get("t-html")
    assert not isinstance(caught.value, UnreadableAnswer) and caught.value.retryable
