"""Protocol C onto Ark: the content list, copied fields, errors in C's names, C record fields."""

from __future__ import annotations

import pytest

from studio.core.errors import BadRequest
from studio.gateway.video import generic_to_ark
from studio.models.videos import VideoTask
from tests.gateway.video.rules_support import CAPS

MODEL = "alpha-2.0"


def translate(body: dict) -> dict:
    return generic_to_ark.translate(body, MODEL, CAPS[MODEL])


def test_prompt_and_medias_become_content_items() -> None:
    upstream = translate({"prompt": "a fox", "resolution": "720P", "duration": 5, "seed": None, "watermark": True,
                          "callback_url": "https://hooks.example/c", "medias": [
                              {"type": "image", "url": "https://e.com/a.png", "role": "reference_image"},
                              {"type": "video", "url": "https://e.com/v.mp4"}]})
    assert upstream == {
        "content": [
            {"type": "text", "text": "a fox"},
            {"type": "image_url", "image_url": {"url": "https://e.com/a.png"}, "role": "reference_image"},
            {"type": "video_url", "video_url": {"url": "https://e.com/v.mp4"}, "role": "reference_video"},
        ],
        "duration": 5, "watermark": True, "callback_url": "https://hooks.example/c", "resolution": "720p",
    }


def test_protocol_a_refusals_speak_of_the_c_fields() -> None:
    with pytest.raises(BadRequest) as exc:
        translate({"prompt": "x", "medias": [{"type": "image", "url": "https://e.com/a.png", "role": "hero"}]})
    assert exc.value.param == "medias[0].role" and exc.value.message.startswith("medias[0].role")
    with pytest.raises(BadRequest) as exc:
        translate({"prompt": "x", "duration": 99})
    assert exc.value.param == "duration"
    with pytest.raises(BadRequest) as exc:
        translate({"prompt": "x", "medias": [{"type": "image", "url": "https://e.com/a.png", "role": "last_frame"}]})
    assert exc.value.param == "medias"


def test_record_fields_from_the_ark_record() -> None:
    task = VideoTask(protocol="generic", request={"resolution": "720P", "ratio": "16:9"},
                     upstream_record={"frames": 121, "framespersecond": 24, "usage": {"total_tokens": 108900,
                                                                                       "completion_tokens": 1}})
    assert generic_to_ark.record_fields(task) == {"resolution": "720p", "ratio": "16:9", "video_duration": 5.04,
                                                  "usage": {"total_tokens": 108900}}
    reported = VideoTask(protocol="generic", request={}, upstream_record={"resolution": "1080p", "ratio": "1:1",
                                                                     "duration": 8})
    assert generic_to_ark.record_fields(reported) == {"resolution": "1080p", "ratio": "1:1", "video_duration": 8,
                                                      "usage": {}}
