"""Edits of the offline image model that act on the region or object they name: removed, recoloured,
restyled or added, the rest of the picture kept, the regions travelling with the PNG to the next
turn; pictures the sandbox did not make are segmented instead. Pure Pillow/numpy."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image, ImageDraw

from studio.sandbox import regions
from studio.sandbox.imaging import encode_image, render_edit, render_prompt_image

SCENE = "an orange cat by a house in a sunny meadow with two trees"
LABEL_BAND = 0.06  # the edit's label in the top-left corner


@pytest.fixture(autouse=True)
def _media_root():
    yield


@pytest.fixture(autouse=True)
def _fresh_gateway_state():
    yield


def reopened(image: Image.Image, fmt: str = "png") -> Image.Image:
    """The picture as the next turn receives it: encoded, sent, decoded."""
    picture = Image.open(io.BytesIO(encode_image(image, fmt)))
    picture.load()
    return picture


@pytest.fixture(scope="module")
def meadow() -> Image.Image:
    return reopened(render_prompt_image(SCENE, 768, 512, seed=7))


def of_kind(image: Image.Image, kind: str) -> list[regions.Region]:
    return [r for r in regions.noted(image) or [] if r.kind == kind]


def changed(before: Image.Image, after: Image.Image) -> np.ndarray:
    a = np.asarray(before.convert("RGB"), dtype=np.int32)
    b = np.asarray(after.convert("RGB"), dtype=np.int32)
    return np.abs(a - b).sum(axis=2) > 24


def outside(region: regions.Region, size: tuple[int, int]) -> np.ndarray:
    """Pixels well away from the region's box and the label band."""
    W, H = size
    keep = np.ones((H, W), dtype=bool)
    x1, y1, x2, y2 = region.pixels(size)
    pad = round(min(W, H) * 0.04)
    keep[max(0, y1 - pad):y2 + pad, max(0, x1 - pad):x2 + pad] = False
    keep[: round(H * LABEL_BAND), : W // 2] = False
    return keep


def test_a_scene_notes_what_it_drew_and_the_png_carries_it(meadow):
    kinds = {r.kind for r in regions.noted(meadow)}
    assert {"sky", "ground", "cat", "house", "tree"} <= kinds
    assert regions.noted(reopened(meadow, "jpeg")) is None  # only PNG keeps the note


def test_remove_the_cat_fills_it_from_its_surroundings_and_keeps_the_rest(meadow):
    cat = of_kind(meadow, "cat")[0]
    out = render_edit(meadow, "remove the cat", seed=1)
    outline = np.asarray(regions.silhouette(cat, meadow.size)) > 0
    diff = changed(meadow, out)
    assert diff[outline].mean() > 0.6  # the cat is gone...
    assert diff[outside(cat, meadow.size)].mean() < 0.01  # ...and nothing else moved
    # Where the cat was now looks like the ground around it, not like the (black) cat.
    near = np.asarray(out.convert("RGB"), dtype=np.float64)[outline].mean(axis=0)
    assert near.sum() > np.asarray(meadow.convert("RGB"), dtype=np.float64)[outline].mean(axis=0).sum() + 30
    assert of_kind(reopened(out), "cat") == []


def test_make_the_house_blue_recolours_only_the_house(meadow):
    house = of_kind(meadow, "house")[0]
    out = render_edit(meadow, "make the house blue", seed=1)
    outline = np.asarray(regions.silhouette(house, meadow.size)) > 0
    r, g, b = np.asarray(out.convert("RGB"), dtype=np.float64)[outline].mean(axis=0)
    assert b > r + 40 and b > g + 20
    assert changed(meadow, out)[outside(house, meadow.size)].mean() < 0.01
    assert of_kind(reopened(out), "house")[0].colour == "blue"


def test_restyling_a_region_changes_its_style_there_only(meadow):
    sky = of_kind(meadow, "sky")[0]
    out = render_edit(meadow, "make the sky pink", seed=1)
    top = np.asarray(out.convert("RGB"), dtype=np.float64)[round(512 * 0.1):round(512 * sky.box[3] * 0.9), :]
    assert top[..., 0].mean() > top[..., 1].mean() + 15  # pink: red over green
    ground = of_kind(meadow, "ground")[0]
    below = changed(meadow, out)[round(512 * ground.box[1]) + 8:]
    assert below.mean() < 0.01
    pixelated = render_edit(meadow, "pixelate the cat", seed=1)
    cat = of_kind(meadow, "cat")[0]
    assert changed(meadow, pixelated)[outside(cat, meadow.size)].mean() < 0.01
    assert changed(meadow, pixelated)[np.asarray(regions.silhouette(cat, meadow.size)) > 0].mean() > 0.05


def test_add_draws_the_thing_and_notes_it_for_the_next_turn(meadow):
    first = reopened(render_edit(meadow, "remove the cat", seed=1))
    second = reopened(render_edit(first, "add a red star", seed=2))
    star = of_kind(second, "star")
    assert len(star) == 1 and star[0].colour == "red"
    x1, y1, x2, y2 = star[0].pixels(second.size)
    box = np.asarray(second.convert("RGB"), dtype=np.int32)[y1:y2, x1:x2]
    assert ((box[..., 0] > 150) & (box[..., 1] < 90)).mean() > 0.2
    third = render_edit(second, "remove the star", seed=3)  # a thing added by an edit can be named later
    assert of_kind(reopened(third), "star") == []


def test_the_named_one_is_found_deterministically():
    picture = reopened(render_prompt_image("a forest of trees", 768, 512, seed=3))
    trees = of_kind(picture, "tree")
    assert len(trees) > 2
    left = regions.find_target("remove the tree on the left", regions.noted(picture))
    assert left is not None and left.regions[0] == min(trees, key=lambda r: r.box[0] + r.box[2])
    every = regions.find_target("make all the trees red", regions.noted(picture))
    assert every is not None and set(every.regions) == set(trees) and not every.remove
    assert render_edit(picture, "remove the tree on the left", seed=5).tobytes() == \
        render_edit(picture, "remove the tree on the left", seed=5).tobytes()


def test_a_picture_without_notes_is_segmented_to_find_the_region():
    picture = Image.new("RGB", (400, 300), (235, 235, 240))
    ImageDraw.Draw(picture).ellipse((60, 80, 160, 180), fill=(220, 30, 30))
    ImageDraw.Draw(picture).rectangle((250, 90, 340, 180), fill=(30, 60, 200))
    photo = reopened(picture, "jpeg")
    out = render_edit(photo, "remove the red subject", seed=1)
    pixels = np.asarray(out.convert("RGB"), dtype=np.int32)
    assert pixels[130, 110, 0] < 190 or pixels[130, 110, 1] > 150  # the red disc is gone
    assert abs(pixels[135, 295] - np.asarray(photo)[135, 295]).sum() < 30  # the blue square stays
