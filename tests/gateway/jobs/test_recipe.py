"""A recorded result's recipe (the Generate form that makes it again) and fresh variation seeds."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from studio.gateway.jobs.recipe import MAX_SEED, MAX_VARIATIONS, Recipe, recipe, variation_seeds


@dataclass
class Recorded:
    """The fields of a stored generation a recipe reads."""

    model_id: str
    prompt: str | None
    parameters: dict[str, Any] = field(default_factory=dict)


def test_native_request_gives_ratio_size_and_seed():
    got = recipe(Recorded("delta-3.1-flash-image", "a red fox", {
        "generationConfig": {"seed": 7, "imageConfig": {"aspectRatio": "16:9", "imageSize": "2K"}},
        "contents": [{"parts": [{"text": "a red fox"}]}]}))
    assert got == Recipe(model="delta-3.1-flash-image", prompt="a red fox",
                         options={"aspect_ratio": "16:9", "image_size": "2K"}, seed=7)


def test_images_request_gives_its_options():
    got = recipe(Recorded("kappa-image-1", "two pears", {"size": "1024x1536", "quality": "high", "n": 2,
                                                         "output_format": "webp", "background": ""}))
    assert got.options == {"size": "1024x1536", "quality": "high", "output_format": "webp"} and got.seed is None


def test_odd_recorded_values_are_left_out():
    got = recipe(Recorded("kappa-image-1", None, {"generationConfig": "oops", "seed": True, "size": 1024}))
    assert got == Recipe(model="kappa-image-1", prompt="", options={}, seed=None)
    assert got.as_dict() == {"model": "kappa-image-1", "prompt": "", "options": {}, "seed": None}


def test_variation_seeds_are_distinct_and_bounded():
    seeds = variation_seeds(10, random.Random(3))
    assert len(seeds) == MAX_VARIATIONS == len(set(seeds))
    assert all(1 <= s < MAX_SEED for s in seeds)
    assert len(variation_seeds(0)) == 1
