"""The images family's neutral types: source images, a job's effective settings, result items from
vendor entries, and the size tiers of native models."""

from __future__ import annotations

import base64

import pytest

from studio.core.entries import ModelEntry
from studio.core.errors import BadRequest, UnreadableAnswer
from studio.core.images import (
    EDITS,
    GENERATIONS,
    ImageItem,
    ImageJob,
    SourceImage,
    item_from_vendor,
    tier_size,
)

NATIVE = ModelEntry(model_id="delta-3-pro-image", kind="image", routes=frozenset(), created=0, owned_by="x",
                    default_protocol="gemini",
                    capabilities={"image_sizes": ["1K", "2K", "4K"], "aspect_ratios": ["1:1", "16:9", "3:4"]})


def job(family: str = "standard", **fields) -> ImageJob:
    return ImageJob(route=GENERATIONS, model=NATIVE, family=family, fields=fields, prompt="p")


def test_job_count_is_what_a_reservation_is_made_for():
    assert job(n=3).count == 3
    assert job(sequential_image_generation_options={"max_images": 5}, n=2).count == 5
    assert job(n=100).count == 16 and job(n=0).count == 1


@pytest.mark.parametrize(("size", "ratio", "tier"), [
    ("auto", None, None), ("2K", None, "2K"), ("1024x1024", "1:1", "1K"), ("1920x1080", "16:9", "2K"),
    ("3840x2160", "16:9", "4K"), ("768x1024", "3:4", "1K"),
])
def test_sizes_map_to_ratio_and_tier(size, ratio, tier):
    got = tier_size(size, NATIVE)
    assert (got.aspect_ratio, got.tier) == (ratio, tier)


@pytest.mark.parametrize("size", ["big", "0x100", "1000x300", "512"])
def test_unusable_sizes_are_a_400_naming_size(size):
    with pytest.raises(BadRequest) as caught:
        tier_size(size, NATIVE)
    assert caught.value.param == "size"


def test_source_image_data_uri_and_filename():
    image = SourceImage(data=b"\x89PNG", mime="image/webp", width=2, height=2, field="image")
    assert image.data_uri() == "data:image/webp;base64," + base64.b64encode(b"\x89PNG").decode()
    assert image.filename == "image.webp"
    assert "PNG" not in repr(image)  # bytes are never printed


def test_job_defaults_depend_on_the_family():
    model = NATIVE
    standard = ImageJob(route=GENERATIONS, model=model, family="standard", fields={}, prompt="p")
    layered = ImageJob(route=EDITS, model=model, family="layered", fields={"stream": 1, "partial_images": "2"},
                       prompt="p")
    assert (standard.response_format, standard.stream, standard.partial_images) == ("b64_json", False, 0)
    assert (layered.response_format, layered.stream, layered.partial_images) == ("url", True, 2)
    chosen = ImageJob(route=GENERATIONS, model=model, family="layered", fields={"response_format": "b64_json"},
                      prompt="p")
    assert chosen.response_format == "b64_json"


def test_item_converts_between_base64_and_bytes_once():
    from_b64 = ImageItem(b64=base64.b64encode(b"img").decode())
    assert from_b64.raw() == b"img" and from_b64.data == b"img"
    from_bytes = ImageItem(data=b"img")
    assert from_bytes.b64_text() == "aW1n" and from_bytes.b64 == "aW1n"
    assert from_b64.ok and from_bytes.ok
    assert not ImageItem().ok
    assert not ImageItem(data=b"x", error={"code": "x"}).ok
    assert ImageItem().asset_id != ImageItem().asset_id


def test_an_item_whose_base64_is_not_base64_is_the_upstreams_fault():
    with pytest.raises(UnreadableAnswer, match="not base64"):
        ImageItem(b64="x").raw()
    with pytest.raises(UnreadableAnswer):
        ImageItem(b64="é" * 8).raw()


def test_item_from_vendor_entries():
    openai = item_from_vendor({"b64_json": "aW1n", "revised_prompt": "better", "output_format": "webp",
                               "size": "1024x1024"})
    assert (openai.b64, openai.mime, openai.revised_prompt, openai.size) == ("aW1n", "image/webp", "better",
                                                                             "1024x1024")
    downloaded = item_from_vendor({"url": "https://x", "_bytes": b"jpg", "_mime": "image/jpeg", "z_index": 2,
                                   "name": "sky", "bounding_box": {"x": 0}}, "jpeg")
    assert (downloaded.data, downloaded.mime, downloaded.z_index, downloaded.name) == (b"jpg", "image/jpeg", 2, "sky")
    assert downloaded.bounding_box == {"x": 0}
    failed = item_from_vendor({"error": {"code": "OutputImageSensitive", "message": "no", "extra": None}})
    assert failed.error == {"code": "OutputImageSensitive", "message": "no"} and not failed.ok
    odd = item_from_vendor({"b64_json": 5, "bounding_box": "big", "error": "bad"}, "jpeg")
    assert (odd.b64, odd.bounding_box, odd.error, odd.mime) == (None, None, None, "image/jpeg")
