"""Protocol C onto DashScope: input and parameters, role aliases per model, C names in errors."""

from __future__ import annotations

import pytest

from studio.core.errors import BadRequest
from studio.gateway.video import generic_to_dashscope
from studio.models.videos import VideoTask
from tests.gateway.video.rules_support import CAPS


def translate(model: str, body: dict) -> dict:
    return generic_to_dashscope.translate(body, model, CAPS[model])


def test_fields_move_into_input_and_parameters() -> None:
    upstream = translate("beta3.0-video", {"prompt": "a kite", "negative_prompt": "rain", "resolution": "720p",
                                           "duration": 5, "ratio": "16:9", "generate_audio": True, "medias": [
                                               {"type": "image", "url": "https://e.com/a.png"}]})
    assert upstream == {
        "input": {"prompt": "a kite", "negative_prompt": "rain",
                  "media": [{"type": "first_frame", "url": "https://e.com/a.png"}]},
        "parameters": {"duration": 5, "ratio": "16:9", "resolution": "720P", "audio": True},
    }


def test_roles_use_the_spelling_of_the_models_media_table() -> None:
    edit = translate("beta2.7-videoedit", {"prompt": "brighter", "medias": [
        {"type": "video", "url": "https://e.com/v.mp4", "role": "edit_video"}]})
    assert edit["input"]["media"] == [{"type": "video", "url": "https://e.com/v.mp4"}]
    voice = translate("beta2.7-r2v", {"prompt": "sing", "medias": [
        {"type": "image", "url": "https://e.com/a.png", "role": "reference_image"},
        {"type": "audio", "url": "https://e.com/a.mp3"}]})
    assert [m["type"] for m in voice["input"]["media"]] == ["reference_image", "reference_voice"]


def test_generate_audio_only_on_beta_3() -> None:
    with pytest.raises(BadRequest) as exc:
        translate("gamma-1.1-t2v", {"prompt": "x", "generate_audio": False})
    assert exc.value.param == "generate_audio"


def test_refusals_speak_of_the_c_fields() -> None:
    with pytest.raises(BadRequest) as exc:
        translate("beta3.0-video", {"prompt": "x", "duration": 99})
    assert exc.value.param == "duration" and exc.value.message.startswith("duration:")
    with pytest.raises(BadRequest) as exc:
        translate("beta3.0-video", {"prompt": "x", "resolution": "4k"})
    assert exc.value.param == "resolution"
    with pytest.raises(BadRequest) as exc:
        translate("gamma-1.1-t2v", {"prompt": "x", "medias": [{"type": "image", "url": "https://e.com/a.png"}]})
    assert exc.value.param == "medias[0].type"
    with pytest.raises(BadRequest) as exc:
        translate("beta2.7-i2v", {"prompt": "move"})
    assert exc.value.param == "medias"


def test_record_fields_from_the_dashscope_usage() -> None:
    b_task = VideoTask(protocol="dashscope", request={"parameters": {"resolution": "720P", "ratio": "9:16"}},
                       upstream_record={"usage": {"output_video_duration": 5, "input_video_duration": 3,
                                                  "video_count": 1}})
    assert generic_to_dashscope.record_fields(b_task) == {
        "resolution": "720p", "ratio": "9:16", "video_duration": 5,
        "usage": {"input_video_duration": 3, "output_video_duration": 5}}
    c_task = VideoTask(protocol="generic", request={}, upstream_record={"usage": {"SR": 1080, "duration": 4,
                                                                            "ratio": "1:1"}})
    assert generic_to_dashscope.record_fields(c_task) == {"resolution": "1080p", "ratio": "1:1", "video_duration": 4,
                                                          "usage": {"duration": 4}}
