"""Protocol B (DashScope) create rules: the three variants, media tables, modes and clip lengths."""

from __future__ import annotations

from studio.gateway.video.rules_dashscope import validate_dashscope
from tests.gateway.video.rules_support import CAPS, IMG, clip_data_uri, rejects


def beta(model: str, prompt: str | None = "a kite", media=None, **parameters) -> None:
    body: dict = {"model": model, "input": {}}
    if prompt is not None:
        body["input"]["prompt"] = prompt
    if media is not None:
        body["input"]["media"] = media
    if parameters:
        body["parameters"] = parameters
    validate_dashscope(body, model, CAPS[model])


def m(kind: str, url: str = IMG) -> dict:
    return {"type": kind, "url": url}


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


def test_a_media_type_that_is_not_a_string_is_refused_by_name():
    for kind in (["first_frame"], {"a": 1}, 3, None):
        rejects("input.media[0].type", beta, "beta3.0-video", media=[{"type": kind, "url": IMG}])
