"""Protocol A (Ark Seedance) create rules, read from each model's catalog capabilities."""

from __future__ import annotations

import pytest

from studio.core.errors import BadRequest
from studio.gateway.video.rules_ark import validate_ark
from tests.gateway.video.rules_support import CAPS, IMG, TEXT, rejects


def image(role: str) -> dict:
    return {"type": "image_url", "image_url": {"url": IMG}, "role": role}


def alpha(model: str, **fields) -> None:
    validate_ark({"model": model, "content": fields.pop("content", TEXT), **fields}, model, CAPS[model])


@pytest.mark.parametrize("model, ok, bad", [
    ("alpha-1.0-pro", [2, 12], [1, 13, -1]),
    ("alpha-1.0-pro-fast", [2, 12], [1, 13]),
    ("alpha-1.5-pro", [4, 12, -1], [3, 13]),
    ("alpha-2.0", [4, 15, -1], [3, 16]),
    ("alpha-2.0-fast", [4, 15, -1], [2, 16]),
    ("alpha-2.5", [4, 15, -1], [3, 16]),
])
def test_duration_ranges_per_version(model, ok, bad):
    for value in ok:
        alpha(model, duration=value)
    for value in bad:
        rejects("duration", alpha, model, duration=value)


def test_frames_form_range_and_models():
    alpha("alpha-1.0-pro", frames=29)
    alpha("alpha-1.0-pro", frames=289)
    alpha("alpha-1.0-pro", frames=121, duration=99)  # frames wins over duration
    for value in (25, 30, 293):
        rejects("frames", alpha, "alpha-1.0-pro", frames=value)
    rejects("frames", alpha, "alpha-2.0", frames=29)
    rejects("frames", alpha, "alpha-1.5-pro", frames=29)


def test_execution_expires_after_range():
    alpha("alpha-2.0", execution_expires_after=3600)
    alpha("alpha-2.0", execution_expires_after=259200)
    rejects("execution_expires_after", alpha, "alpha-2.0", execution_expires_after=3599)
    rejects("execution_expires_after", alpha, "alpha-2.0", execution_expires_after=259201)


def test_resolution_per_model():
    alpha("alpha-2.0", resolution="4k")
    alpha("alpha-2.0", resolution="1080p")
    rejects("resolution", alpha, "alpha-2.0-fast", resolution="1080p")
    rejects("resolution", alpha, "alpha-2.0-mini", resolution="1080p")
    rejects("resolution", alpha, "alpha-2.5", resolution="4k")
    rejects("resolution", alpha, "alpha-1.5-pro", resolution="4k")
    rejects("ratio", alpha, "alpha-2.0", ratio="2:1")


def test_seed_range_and_unsupported_on_2_0_series():
    alpha("alpha-1.5-pro", seed=-1)
    alpha("alpha-1.5-pro", seed=2**32 - 1)
    rejects("seed", alpha, "alpha-1.5-pro", seed=2**32)
    rejects("seed", alpha, "alpha-1.5-pro", seed=-2)
    rejects("seed", alpha, "alpha-2.0", seed=5)
    rejects("seed", alpha, "alpha-2.0-mini", seed=5)


def test_priority_only_on_2_0_and_in_range():
    alpha("alpha-2.0", priority=9)
    rejects("priority", alpha, "alpha-2.0", priority=10)
    rejects("priority", alpha, "alpha-1.5-pro", priority=1)
    rejects("priority", alpha, "alpha-1.5-pro", priority=1, service_tier="flex")


def test_service_tier_flex_rejected_on_2_0_series():
    alpha("alpha-1.5-pro", service_tier="flex")
    alpha("alpha-2.0", service_tier="default")
    rejects("service_tier", alpha, "alpha-2.0", service_tier="flex")
    rejects("service_tier", alpha, "alpha-2.0-fast", service_tier="flex")
    rejects("service_tier", alpha, "alpha-1.5-pro", service_tier="slow")


def test_draft_only_on_1_5_pro_and_not_with_last_frame_or_flex():
    alpha("alpha-1.5-pro", draft=True)
    rejects("draft", alpha, "alpha-2.0", draft=True)
    rejects("draft", alpha, "alpha-1.0-pro", draft=True)
    rejects("draft", alpha, "alpha-1.5-pro", draft=True, return_last_frame=True)
    rejects("draft", alpha, "alpha-1.5-pro", draft=True, service_tier="flex")


def test_camera_fixed_rules():
    alpha("alpha-1.0-pro", camera_fixed=True)
    rejects("camera_fixed", alpha, "alpha-2.0", camera_fixed=True)


def test_generate_audio_only_where_supported():
    alpha("alpha-1.5-pro", generate_audio=True)
    alpha("alpha-2.0", generate_audio=True)
    alpha("alpha-1.0-pro", generate_audio=False)
    rejects("generate_audio", alpha, "alpha-1.0-pro", generate_audio=True)


def test_safety_identifier_length():
    alpha("alpha-2.0", safety_identifier="a" * 64)
    rejects("safety_identifier", alpha, "alpha-2.0", safety_identifier="a" * 65)


def test_reference_image_counts_and_modes():
    alpha("alpha-2.0", content=TEXT + [image("reference_image")] * 9)
    rejects("content", alpha, "alpha-2.0", content=TEXT + [image("reference_image")] * 10)
    rejects("content", alpha, "alpha-1.5-pro", content=TEXT + [image("reference_image")])
    alpha("alpha-1.5-pro", content=TEXT + [image("first_frame"), image("last_frame")])
    rejects("content", alpha, "alpha-1.5-pro", content=TEXT + [image("last_frame")])
    rejects("content", alpha, "alpha-2.0", content=TEXT + [image("first_frame"), image("reference_image")])
    rejects("content[1].role", alpha, "alpha-2.0", content=TEXT + [image("background")])
    rejects("content[1].image_url.url", alpha, "alpha-2.0",
            content=TEXT + [{"type": "image_url", "image_url": {"url": "file:///etc/passwd"}}])


def test_editing_and_extension_only_on_2_5():
    edit = {"type": "video_url", "video_url": {"url": "https://example.com/v.mp4"}, "role": "edit_video"}
    alpha("alpha-2.5", content=TEXT + [edit])
    alpha("alpha-2.5", content=TEXT + [{**edit, "role": "extend_backward"}])
    error = rejects("content[1].role", alpha, "alpha-2.0", content=TEXT + [edit])
    assert "alpha-2.0" in error.message


def test_types_are_checked():
    rejects("duration", alpha, "alpha-2.0", duration="5")
    rejects("watermark", alpha, "alpha-2.0", watermark="yes")
    rejects("content", alpha, "alpha-2.0", content=[])


def test_typed_readers_accept_whole_floats_and_name_prefixed_fields():
    from studio.gateway.video.rules_ark import opt_bool, opt_int, opt_str

    assert opt_int({"seed": 5.0}, "seed") == 5
    with pytest.raises(BadRequest) as exc:
        opt_int({"seed": 5.5}, "seed", "parameters.")
    assert exc.value.param == "parameters.seed" and exc.value.code == "InvalidParameter"
    with pytest.raises(BadRequest):
        opt_int({"seed": True}, "seed")
    assert opt_bool({}, "x") is None and opt_str({"x": "y"}, "x") == "y"


def test_callback_url_and_content_items_are_checked():
    rejects("callback_url", alpha, "alpha-2.0", callback_url="ftp://x.example/hook")
    alpha("alpha-2.0", callback_url="https://hooks.example/v")
    rejects("content[1].type", alpha, "alpha-2.0", content=TEXT + [{"type": "gif_url"}])
    rejects("content[1].image_url.url", alpha, "alpha-2.0", content=TEXT + [{"type": "image_url", "image_url": {}}])
    rejects("content[1].draft_task.id", alpha, "alpha-2.0", content=TEXT + [{"type": "draft_task", "draft_task": {}}])
    rejects("content[1].role", alpha, "alpha-2.0",
            content=TEXT + [{"type": "audio_url", "audio_url": {"url": "https://e.com/a.mp3"}, "role": "voice"}])


def test_frame_and_reference_modes_do_not_mix_and_last_frame_needs_a_first():
    rejects("content", alpha, "alpha-2.0", content=TEXT + [image("first_frame"), image("reference_image")])
    rejects("content", alpha, "alpha-2.0", content=TEXT + [image("last_frame")])
    rejects("content", alpha, "alpha-2.0", content=TEXT + [image("first_frame"), image("first_frame")])
    alpha("alpha-2.0", content=TEXT + [image("reference_image")] * 9)
    rejects("content", alpha, "alpha-2.0", content=TEXT + [image("reference_image")] * 10)
