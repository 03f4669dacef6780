"""Protocol A and B validation rules, read from each model's catalog capabilities."""

from __future__ import annotations

import base64
import io

import av
import numpy as np
import pytest

from studio.catalog_data import DEMO_MODELS
from studio.gateway.errors import BadRequest
from studio.gateway.video_rules import validate_alpha
from studio.gateway.video_rules_beta import validate_beta

CAPS = {m["model_id"]: m["capabilities"] for m in DEMO_MODELS}
TEXT = [{"type": "text", "text": "a fox"}]
IMG = "https://example.com/a.png"


def image(role: str) -> dict:
    return {"type": "image_url", "image_url": {"url": IMG}, "role": role}


def alpha(model: str, **fields) -> None:
    validate_alpha({"model": model, "content": fields.pop("content", TEXT), **fields}, model, CAPS[model])


def rejects(param: str, call, *args, **kwargs) -> BadRequest:
    with pytest.raises(BadRequest) as info:
        call(*args, **kwargs)
    assert info.value.param == param, (info.value.param, info.value.message)
    assert param in info.value.message
    return info.value


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


# -- protocol B ------------------------------------------------------------------------------------

def beta(model: str, prompt: str | None = "a kite", media=None, **parameters) -> None:
    body: dict = {"model": model, "input": {}}
    if prompt is not None:
        body["input"]["prompt"] = prompt
    if media is not None:
        body["input"]["media"] = media
    if parameters:
        body["parameters"] = parameters
    validate_beta(body, model, CAPS[model])


def m(kind: str, url: str = IMG) -> dict:
    return {"type": kind, "url": url}


def clip_data_uri(seconds: float) -> str:
    buffer = io.BytesIO()
    with av.open(buffer, "w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=24)
        stream.width, stream.height, stream.pix_fmt = 64, 64, "yuv420p"
        for _ in range(round(seconds * 24)):
            frame = av.VideoFrame.from_ndarray(np.zeros((64, 64, 3), np.uint8), format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return "data:video/mp4;base64," + base64.b64encode(buffer.getvalue()).decode()


def test_beta30_prompt_or_media_and_prompt_length():
    beta("beta3.0-video", prompt=None, media=[m("reference_image")])
    rejects("input.prompt", beta, "beta3.0-video", prompt=None)
    beta("beta3.0-video", prompt="x" * 20000)
    rejects("input.prompt", beta, "beta3.0-video", prompt="x" * 20001)


def test_beta30_media_counts():
    beta("beta3.0-video", media=[m("reference_image")] * 10)
    rejects("input.media", beta, "beta3.0-video", media=[m("reference_image")] * 11)
    rejects("input.media", beta, "beta3.0-video", media=[m("first_frame")] * 2)
    rejects("input.media", beta, "beta3.0-video", media=[m("reference_video", "https://e.com/v.mp4")] * 6)
    rejects("input.media", beta, "beta3.0-video", media=[m("reference_audio", "https://e.com/a.mp3")] * 6)
    rejects("input.media", beta, "beta3.0-video", media=[m("link", "https://e.com/")] * 2)
    rejects("input.media[0].type", beta, "beta3.0-video", media=[m("video")])


def test_beta30_combination_rules():
    beta("beta3.0-video", media=[m("first_frame"), m("last_frame")])
    rejects("input.media", beta, "beta3.0-video", media=[m("last_frame")])
    rejects("input.media", beta, "beta3.0-video", media=[m("first_frame"), m("reference_image")])
    rejects("input.media", beta, "beta3.0-video", media=[m("first_frame"), m("link", "https://e.com/")])
    beta("beta3.0-video", media=[m("reference_image"), m("file", "https://e.com/brief.pdf")])
    rejects("input.media", beta, "beta3.0-video",
            media=[m("file", "https://e.com/brief.pdf"), m("link", "https://e.com/")])
    rejects("input.media[0].url", beta, "beta3.0-video", media=[m("file", "https://e.com/x.exe")])
    rejects("parameters.prompt_extend", beta, "beta3.0-video", media=[m("link", "https://e.com/")],
            prompt_extend=False)
    beta("beta3.0-video", media=[m("link", "https://e.com/")], prompt_extend=True)


def test_beta30_duration_resolution_seed_ratio():
    for ok in (2, 30, -1):
        beta("beta3.0-video", duration=ok)
    for bad_value in (1, 31):
        rejects("parameters.duration", beta, "beta3.0-video", duration=bad_value)
    rejects("parameters.resolution", beta, "beta3.0-video", resolution="4K")
    rejects("parameters.resolution", beta, "beta3.0-video", resolution="720p")
    beta("beta3.0-video", seed=-1)
    beta("beta3.0-video", seed=2147483647)
    rejects("parameters.seed", beta, "beta3.0-video", seed=2147483648)
    rejects("parameters.seed", beta, "beta3.0-video", seed=-5)
    beta("beta3.0-video", ratio="adaptive")
    rejects("parameters.ratio", beta, "beta3.0-video", ratio="21:9")
    beta("gamma-1.1-t2v", ratio="21:9")
    rejects("parameters.ratio", beta, "beta2.7-t2v", ratio="21:9")


def test_beta30_video_input_plus_output_at_most_30_seconds():
    clip = clip_data_uri(3)
    beta("beta3.0-video", media=[m("reference_video", clip)], duration=27)
    rejects("parameters.duration", beta, "beta3.0-video", media=[m("reference_video", clip)], duration=28)


def test_beta30_reference_video_total_seconds():
    clip = clip_data_uri(6)
    beta("beta3.0-video", media=[m("reference_video", clip)] * 2, duration=-1)
    rejects("input.media", beta, "beta3.0-video", media=[m("reference_video", clip)] * 3, duration=-1)


def test_variant_media_types_and_modes():
    rejects("input.prompt", beta, "beta2.7-t2v", prompt=None)
    rejects("input.media", beta, "gamma-1.1-i2v", media=[])
    beta("gamma-1.1-i2v", media=[m("first_frame")])
    rejects("input.media[0].type", beta, "gamma-1.1-i2v", media=[m("last_frame")])
    beta("beta2.7-videoedit", media=[m("video", "https://e.com/v.mp4")], audio_setting="origin")
    rejects("parameters.audio_setting", beta, "beta2.7-t2v", audio_setting="origin")
    rejects("input.media", beta, "beta2.7-videoedit", media=[m("reference_image")])
