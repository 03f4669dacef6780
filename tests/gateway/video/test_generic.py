"""Protocol C's shared checks, the per-protocol translation registry, and renaming params back."""

from __future__ import annotations

import pytest

from studio.core.errors import BadRequest, CapabilityMissing
from studio.gateway.video import generic, generic_to_ark, generic_to_dashscope, translations


def refused(param: str, body: dict) -> BadRequest:
    with pytest.raises(BadRequest) as exc:
        generic.check_common(body)
    assert exc.value.param == param, (exc.value.param, exc.value.message)
    return exc.value


def test_translation_pairs_are_keyed_by_format() -> None:
    assert translations.pair("generic", "ark") is generic_to_ark
    assert translations.pair("generic", "dashscope") is generic_to_dashscope
    with pytest.raises(CapabilityMissing):
        translations.pair("generic", "gemini")


def test_roles_default_by_kind_and_by_image_count() -> None:
    one_image = generic.check_common({"medias": [{"type": "image", "url": "https://e.com/a.png"}]})
    assert one_image == [{"kind": "image", "url": "https://e.com/a.png", "role": "first_frame", "index": "0"}]
    mixed = generic.check_common({"prompt": "x", "medias": [
        {"type": "image_url", "url": "https://e.com/a.png"}, {"type": "image", "url": "https://e.com/b.png"},
        {"type": "video", "url": "https://e.com/v.mp4"}, {"type": "audio_url", "url": "https://e.com/a.mp3"},
        {"type": "image", "url": "https://e.com/c.png", "role": "last_frame"}]})
    assert [m["role"] for m in mixed] == ["reference_image", "reference_image", "reference_video", "reference_audio",
                                          "last_frame"]
    assert [m["index"] for m in mixed] == ["0", "1", "2", "3", "4"]


def test_prompt_or_medias_is_required() -> None:
    refused("prompt", {})
    refused("prompt", {"prompt": "   "})
    assert generic.check_common({"prompt": "a fox"}) == []


@pytest.mark.parametrize(("body", "param"), [
    ({"prompt": 5}, "prompt"),
    ({"prompt": "x", "watermark": "no"}, "watermark"),
    ({"prompt": "x", "duration": "5"}, "duration"),
    ({"prompt": "x", "callback_url": "gopher://x"}, "callback_url"),
    ({"prompt": "x", "medias": {"type": "image"}}, "medias"),
    ({"prompt": "x", "medias": ["https://e.com/a.png"]}, "medias[0]"),
    ({"prompt": "x", "medias": [{"type": "gif", "url": "u"}]}, "medias[0].type"),
    ({"prompt": "x", "medias": [{"type": "image"}]}, "medias[0].url"),
    ({"prompt": "x", "medias": [{"type": "image", "url": "u", "role": 3}]}, "medias[0].role"),
])
def test_type_checks(body: dict, param: str) -> None:
    refused(param, body)


def test_rename_param_maps_the_longest_prefix_and_the_message() -> None:
    exc = BadRequest("content[2].image_url.url: must be a URL string", param="content[2].image_url.url", code="X")
    renamed = generic.rename_param(exc, {"content": "medias", "content[2]": "medias[1]"})
    assert (renamed.param, renamed.code) == ("medias[1].image_url.url", "X")
    assert renamed.message == "medias[1].image_url.url: must be a URL string"
    untouched = BadRequest("resolution: bad", param="resolution")
    assert generic.rename_param(untouched, {"content": "medias"}) is untouched
    # "content[1]" must not capture "content[10]".
    ten = BadRequest("content[10].role: bad", param="content[10].role")
    assert generic.rename_param(ten, {"content[1]": "medias[0]"}) is ten
