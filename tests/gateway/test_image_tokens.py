"""The tokens an image call reserves: each family's billing, from its size and quality."""

from __future__ import annotations

import pytest

from studio.core.images import GENERATIONS, ImageJob
from studio.gateway import image_tokens
from tests.gateway.catalog import model_entry


def job(model_id: str, family: str, **fields) -> ImageJob:
    return ImageJob(route=GENERATIONS, model=model_entry(model_id), family=family, fields=fields, prompt="a fox")


@pytest.mark.parametrize(("fields", "tokens"), [
    ({"size": "1024x1024", "quality": "low"}, 272),
    ({"size": "1024x1024", "quality": "high"}, 4160),
    ({"size": "1536x1024", "quality": "medium"}, 1584),
    ({"size": "1024x1536", "quality": "high"}, 6240),
    ({}, 6240),  # size and quality auto: the largest picture at the highest quality
])
def test_a_gpt_image_picture_is_billed_by_quality_and_pixels(fields, tokens):
    assert image_tokens.per_image(job("kappa-image-1", "standard", **fields)) == tokens


@pytest.mark.parametrize(("size", "tokens"), [("1K", 4096), ("2K", 16384), ("4K", 65536), ("2048x1152", 9216),
                                              ("auto", 16384)])
def test_a_seedream_picture_is_billed_a_token_per_256_pixels(size, tokens):
    assert image_tokens.per_image(job("sigma-5.0-image", "layered", size=size)) == tokens


@pytest.mark.parametrize(("size", "tokens"), [("auto", 1290), ("1K", 1290), ("4K", 2520), ("4096x4096", 2520)])
def test_a_native_picture_on_the_images_route_is_billed_by_its_tier(size, tokens):
    assert image_tokens.per_image(job("delta-3.1-flash-image", "native", size=size)) == tokens


def test_a_native_call_reads_its_tier_from_the_image_config():
    assert image_tokens.native_image("4K") == 2520
    assert image_tokens.native_image(None) == image_tokens.native_image("1K") == 1290
    assert image_tokens.native_image("8K") == 2520  # a tier it does not know: the most
