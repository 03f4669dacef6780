"""Tests for the offline image model: determinism, sizes, prompt/input fidelity, exactness of
kept pixels, segmentation accuracy and encoding. Pure Pillow/numpy, no Django."""

from __future__ import annotations

import hashlib
import io
import time

import numpy as np
import pytest
from PIL import Image, ImageChops, ImageDraw, ImageOps

from studio.sandbox import imaging, palette, scene
from studio.sandbox.imaging import (
    ASPECT_RATIOS_31_FLASH,
    IMAGE_TIERS,
    Layer,
    decompose_layers,
    draw_caption,
    encode_image,
    inpaint,
    outpaint,
    render_composition,
    render_edit,
    render_prompt_image,
    render_thought_draft,
    seed_from,
    sequential_set,
    stamp_watermark,
    tier_size,
)


# The project-wide conftest prepares Django state for every test; these tests are pure imaging,
# so the autouse fixtures are overridden with no-ops and the module runs with or without Django.
@pytest.fixture(autouse=True)
def _media_root():
    yield


@pytest.fixture(autouse=True)
def _fresh_gateway_state():
    yield


def arr(img: Image.Image) -> np.ndarray:
    return np.asarray(img.convert("RGB"), dtype=np.float64)


def mad(a: Image.Image, b: Image.Image) -> float:
    """Mean absolute per-channel difference of two same-size images."""
    return float(np.abs(arr(a) - arr(b)).mean())


def solid(size: tuple[int, int], colour: tuple[int, ...], mode: str = "RGB") -> Image.Image:
    return Image.new(mode, size, colour)


# --------------------------------------------------------------------------- sizes and seeds


def test_tier_table_is_complete_and_consistent():
    assert len(ASPECT_RATIOS_31_FLASH) == 14
    for ratio in ASPECT_RATIOS_31_FLASH:
        rw, rh = (int(v) for v in ratio.split(":"))
        sizes = [tier_size(ratio, tier) for tier in IMAGE_TIERS]
        for w, h in sizes:
            assert abs((w / h) / (rw / rh) - 1) < 0.06, (ratio, w, h)
        # Each tier is exactly twice the previous one.
        for (w1, h1), (w2, h2) in zip(sizes, sizes[1:], strict=False):
            assert (w2, h2) == (w1 * 2, h1 * 2), ratio


@pytest.mark.parametrize(
    ("ratio", "tier", "expected"),
    [
        ("1:1", "512", (512, 512)),
        ("16:9", "1K", (1376, 768)),
        ("9:16", "2K", (1536, 2752)),
        ("4:3", "4K", (4800, 3584)),
        ("3:2", "512", (632, 424)),
        ("4:5", "1K", (928, 1152)),
        ("21:9", "512", (792, 336)),
        ("21:9", "4K", (6336, 2688)),
        ("1:8", "4K", (1536, 12288)),
        ("8:1", "1K", (3072, 384)),
        ("4:1", "2k", (4096, 1024)),
    ],
)
def test_tier_size_values(ratio, tier, expected):
    assert tier_size(ratio, tier) == expected


@pytest.mark.parametrize(("ratio", "tier"), [("2:1", "1K"), ("1:1", "8K"), ("1:1", ""), ("", "1K")])
def test_tier_size_rejects_unknown(ratio, tier):
    with pytest.raises(ValueError):
        tier_size(ratio, tier)


def test_seed_from_is_stable_and_unambiguous():
    s = seed_from("prompt", 42, b"\x00\x01")
    assert s == seed_from("prompt", 42, b"\x00\x01")
    assert 0 <= s < 2**64
    # Not Python's salted hash(): recompute the documented encoding independently.
    h = hashlib.sha256()
    for tag, data in ((b"s", b"prompt"), (b"i", b"42"), (b"y", b"\x00\x01")):
        h.update(tag + len(data).to_bytes(8, "big") + data)
    assert s == int.from_bytes(h.digest()[:8], "big")
    assert seed_from("ab", "c") != seed_from("a", "bc")
    assert seed_from(1) != seed_from("1")
    assert seed_from("x", None) != seed_from("x", 0)
    with pytest.raises(TypeError):
        seed_from(1.5)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- text to image


def test_render_is_deterministic_and_sized():
    a = render_prompt_image("a red sun over the sea", 320, 240, seed=7)
    b = render_prompt_image("a red sun over the sea", 320, 240, seed=7)
    assert a.mode == "RGB" and a.size == (320, 240)
    assert a.tobytes() == b.tobytes()
    # Whitespace is not significant, the seed is.
    assert render_prompt_image("a  red sun over\nthe sea", 320, 240, seed=7).tobytes() == a.tobytes()
    assert render_prompt_image("a red sun over the sea", 320, 240, seed=8).tobytes() != a.tobytes()


@pytest.mark.parametrize("ratio", ["1:1", "16:9", "9:16", "21:9", "8:1", "1:8"])
def test_render_tier_sizes(ratio):
    size = tier_size(ratio, "512")
    img = render_prompt_image("golden mountains at sunset", *size, seed=1)
    assert img.size == size and img.mode == "RGB"


def test_render_tiny_and_invalid_sizes():
    assert render_prompt_image("a star", 16, 16).size == (16, 16)
    for w, h in ((0, 10), (10, -1), (20000, 10)):
        with pytest.raises(ValueError):
            render_prompt_image("x", w, h)


def test_different_prompts_give_different_pictures():
    prompts = ["a cat under the moon at night", "a blue city skyline", "three circles and a star",
               "quarterly report", "a forest with birds and a house"]
    imgs = [render_prompt_image(p, 256, 192, seed=3) for p in prompts]
    for i in range(len(imgs)):
        for j in range(i + 1, len(imgs)):
            assert mad(imgs[i], imgs[j]) > 12, (prompts[i], prompts[j])


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_colour_words_set_the_palette(seed):
    def means(prompt):
        img = render_prompt_image(prompt, 256, 256, seed=seed)
        return arr(img.crop((0, 0, 256, 200))).mean(axis=(0, 1))  # leave out the caption band

    r, _, b = means("a red landscape with a sun")
    assert r > b + 25
    r, _, b = means("blue mountains")
    assert b > r + 25
    r, g, b = means("green circles")
    assert g > r and g > b


def test_analyse_prompt_reads_colours_elements_and_moods():
    info = palette.analyse_prompt("Two cats by the sea under a golden moon, snowy night")
    assert {"cat", "sea", "moon"} <= set(info.elements)
    assert palette.COLOR_WORDS["golden"] in info.colors
    assert {"night", "winter"} <= info.moods
    assert info.landscape
    assert not palette.analyse_prompt("a square and a heart").landscape


def test_caption_is_written_in_the_bottom_band():
    img = render_prompt_image("hello caption", 400, 300, seed=1)
    plain = scene.render_scene("hello caption", imaging._scene_seed("hello caption", 1), 400, 300)
    band = np.asarray(img.crop((0, 240, 400, 300)))
    assert (band.min(axis=2) > 235).sum() > 30  # white text pixels
    box = ImageChops.difference(img, plain).getbbox()
    assert box is not None and box[1] > 300 * 0.6  # the caption touches only the bottom of the picture
    assert draw_caption(plain, "   ") == 0
    assert draw_caption(Image.new("RGB", (40, 40)), "too small") == 0


def test_non_latin_and_long_prompts_do_not_fail():
    long_prompt = " ".join(["supercalifragilistic"] * 60) + "x" * 300
    assert render_prompt_image(long_prompt, 300, 200).size == (300, 200)
    assert render_prompt_image("日本の猫 🐱", 300, 200).size == (300, 200)


def test_thought_draft_is_a_rougher_version_of_the_final():
    final = render_prompt_image("a red sun over the sea", 400, 300, seed=5)
    draft = render_thought_draft("a red sun over the sea", 400, 300, seed=5)
    other = render_prompt_image("a blue city skyline", 400, 300, seed=5)
    assert draft.size == (400, 300)
    assert draft.tobytes() == render_thought_draft("a red sun over the sea", 400, 300, seed=5).tobytes()
    assert mad(draft, final) < mad(draft, other)
    assert draft.tobytes() != final.tobytes()


def test_4k_render_timing():
    for size in ((4096, 4096), (5504, 3072)):
        start = time.perf_counter()
        img = render_prompt_image("golden mountains at sunset with a lake and a cat", *size, seed=1)
        elapsed = time.perf_counter() - start
        assert img.size == size
        print(f"render_prompt_image {size[0]}x{size[1]}: {elapsed:.3f}s")


# --------------------------------------------------------------------------- edits


@pytest.fixture(scope="module")
def base_image() -> Image.Image:
    return render_prompt_image("a cat under the moon at night", 320, 240, seed=11)


@pytest.fixture(scope="module")
def other_image() -> Image.Image:
    return render_prompt_image("neon squares", 320, 240, seed=12)


@pytest.mark.parametrize("instruction", ["make it warmer", "add a red star", "something unusual", "blur it",
                                         "make it brighter", "sepia", "a bit more blue", "pop art"])
def test_edit_stays_close_to_the_input(base_image, other_image, instruction):
    out = render_edit(base_image, instruction, seed=1)
    assert out.size == base_image.size and out.mode == "RGB"
    assert out.tobytes() != base_image.tobytes()
    assert mad(out, base_image) * 2 < mad(out, other_image)
    assert render_edit(base_image, instruction, seed=1).tobytes() == out.tobytes()


def test_edit_mirror_matches_imageops(base_image):
    out = render_edit(base_image, "mirror", seed=1)
    expected = ImageOps.mirror(base_image)
    # Everything but the label strip in the top-left corner is exactly the mirrored input.
    assert out.crop((0, 40, 320, 240)).tobytes() == expected.crop((0, 40, 320, 240)).tobytes()
    assert out.crop((0, 0, 60, 20)).tobytes() != expected.crop((0, 0, 60, 20)).tobytes()  # label


def test_edit_grayscale_and_tint(base_image):
    gray = arr(render_edit(base_image, "black and white", seed=1).crop((0, 40, 320, 240)))
    assert np.abs(gray[..., 0] - gray[..., 2]).max() == 0
    bright = solid((200, 150), (120, 120, 120))
    red = arr(render_edit(bright, "make it red")).mean(axis=(0, 1))
    assert red[0] > red[2] + 40
    warm = arr(render_edit(bright, "warmer")).mean(axis=(0, 1))
    cool = arr(render_edit(bright, "cooler")).mean(axis=(0, 1))
    assert warm[0] - warm[2] > 10 and cool[2] - cool[0] > 10
    assert arr(render_edit(bright, "darker")).mean() < 100 < arr(render_edit(bright, "brighter")).mean()


def test_edit_output_size_and_alpha_input(base_image):
    out = render_edit(base_image, "invert", size=(200, 200))
    assert out.size == (200, 200) and out.mode == "RGB"
    rgba = base_image.convert("RGBA")
    assert render_edit(rgba, "sepia").mode == "RGB"


# --------------------------------------------------------------------------- composition


def test_composition_uses_every_input():
    inputs = [solid((300, 200), (200, 30, 30)), solid((120, 120), (30, 200, 30)), solid((80, 160), (30, 30, 200))]
    out = render_composition(inputs, "my collage", 480, 360, seed=1)
    assert out.size == (480, 360) and out.mode == "RGB"
    px = arr(out).reshape(-1, 3)

    def share(colour):
        return float((np.abs(px - colour).max(axis=1) < 40).mean())

    assert share((176, 26, 26)) > 0.2  # background (slightly dimmed)
    assert share((30, 200, 30)) > 0.03
    assert share((30, 30, 200)) > 0.03
    assert render_composition(inputs, "my collage", 480, 360, seed=1).tobytes() == out.tobytes()
    single = render_composition(inputs[1:2], "one", 480, 360, seed=1)
    assert float((np.abs(arr(single).reshape(-1, 3) - (30, 200, 30)).max(axis=1) < 40).mean()) > 0.1
    assert render_composition([], "nothing", 200, 100).size == (200, 100)


# --------------------------------------------------------------------------- inpaint / outpaint


def _circle_mask(size, box, mode="RGBA"):
    mask = Image.new("RGBA", size, (0, 0, 0, 255))
    ImageDraw.Draw(mask).ellipse(box, fill=(0, 0, 0, 0))
    return mask if mode == "RGBA" else mask.getchannel("A")


@pytest.mark.parametrize("mask_mode", ["RGBA", "L"])
def test_inpaint_keeps_opaque_mask_pixels_exactly(base_image, mask_mode):
    mask = _circle_mask(base_image.size, (80, 40, 240, 200), mask_mode)
    out = inpaint(base_image, mask, "a green tree", seed=1)
    assert out.size == base_image.size and out.mode == "RGB"
    keep = np.asarray(mask.getchannel("A") if mask.mode == "RGBA" else mask) == 255
    a, b = np.asarray(base_image), np.asarray(out)
    assert np.array_equal(a[keep], b[keep])
    changed = np.any(a[~keep] != b[~keep], axis=1)
    assert changed.mean() > 0.9
    assert inpaint(base_image, mask, "a green tree", seed=1).tobytes() == out.tobytes()


def test_inpaint_rgba_image_and_own_alpha():
    img = Image.new("RGBA", (120, 90), (10, 120, 200, 255))
    ImageDraw.Draw(img).rectangle((30, 20, 80, 60), fill=(0, 0, 0, 0))  # transparent hole to fill
    out = inpaint(img, None, "a sun", seed=2)
    assert out.mode == "RGBA"
    a, b = np.asarray(img), np.asarray(out)
    opaque = a[..., 3] == 255
    assert np.array_equal(a[opaque], b[opaque])
    assert (b[~opaque][:, 3] == 255).all()  # the hole is filled and opaque


def test_inpaint_rejects_mismatched_mask(base_image):
    with pytest.raises(ValueError):
        inpaint(base_image, Image.new("RGBA", (10, 10)), "x")


def test_outpaint_keeps_original_and_fills_around(base_image):
    out = outpaint(base_image, (500, 400), None, None, "a cat under the moon at night", seed=1)
    assert out.size == (500, 400)
    ox, oy = (500 - 320) // 2, (400 - 240) // 2
    assert out.crop((ox, oy, ox + 320, oy + 240)).tobytes() == base_image.tobytes()
    assert len(set(out.crop((0, 0, 500, oy)).getdata())) > 20  # generated, not a flat border

    bg = solid((100, 100), (250, 200, 10))
    out2 = outpaint(base_image, (900, 500), (10, 20), bg, "", seed=1)
    assert out2.crop((10, 20, 330, 260)).tobytes() == base_image.tobytes()
    far = arr(out2.crop((700, 300, 900, 500))).mean(axis=(0, 1))
    assert np.abs(far - (250, 200, 10)).max() < 8  # background image used away from the seam
    assert outpaint(base_image, (500, 400), None, None, "a cat", seed=1).tobytes() == \
        outpaint(base_image, (500, 400), None, None, "a cat", seed=1).tobytes()


def test_outpaint_partial_offset_and_rgba():
    img = Image.new("RGBA", (50, 40), (200, 10, 10, 128))
    out = outpaint(img, (100, 100), (-10, 70), None, "sea", seed=1)
    assert out.mode == "RGBA" and out.size == (100, 100)
    assert out.crop((0, 70, 40, 100)).tobytes() == img.crop((10, 0, 50, 30)).tobytes()


# --------------------------------------------------------------------------- sequences


def test_sequential_set_is_a_related_series():
    frames = sequential_set("a sun over the mountains", 4, 240, 180, seed=3)
    assert len(frames) == 4 and all(f.size == (240, 180) for f in frames)
    unrelated = render_prompt_image("neon squares", 240, 180, seed=3)
    for a, b in zip(frames, frames[1:], strict=False):
        assert a.tobytes() != b.tobytes()
        assert mad(a, b) * 3 < mad(a, unrelated)
    assert [f.tobytes() for f in frames] == [f.tobytes() for f in sequential_set("a sun over the mountains", 4,
                                                                                  240, 180, seed=3)]


def test_sequential_set_with_reference_and_bad_count():
    ref = solid((64, 64), (30, 160, 60))
    frames = sequential_set("spinning triangles", 3, 160, 160, seed=1, reference=ref)
    plain = sequential_set("spinning triangles", 3, 160, 160, seed=1)
    assert len(frames) == 3
    green = [arr(f).mean(axis=(0, 1)) for f in frames]
    assert all(g[1] > g[0] and g[1] > g[2] for g in green)
    assert frames[0].tobytes() != plain[0].tobytes()
    with pytest.raises(ValueError):
        sequential_set("x", 0, 100, 100)


# --------------------------------------------------------------------------- layers

RECTS = {
    "Red": ((60, 40, 300, 220), (220, 30, 30)),
    "Blue": ((500, 110, 860, 340), (30, 60, 220)),
    "Green": ((180, 400, 660, 580), (40, 170, 60)),
}


@pytest.fixture(scope="module")
def rect_image() -> Image.Image:
    img = Image.new("RGB", (900, 640), "white")  # larger than the analysis size: exercises rescaling
    d = ImageDraw.Draw(img)
    for (x1, y1, x2, y2), colour in RECTS.values():
        d.rectangle((x1, y1, x2 - 1, y2 - 1), fill=colour)  # x2/y2 exclusive
    return img


def test_decompose_layers_finds_the_rectangles(rect_image):
    layers = decompose_layers(rect_image)
    assert all(isinstance(layer, Layer) for layer in layers)
    base = layers[0]
    assert base.z_index == 0 and base.image.mode == "RGB" and base.bbox == (0, 0, 900, 640)
    assert base.normalized == (0, 0, 1000, 1000)
    assert base.image.tobytes() == rect_image.tobytes()
    assert [layer.z_index for layer in layers] == list(range(len(layers)))
    for colour_name, (box, colour) in RECTS.items():
        match = [layer for layer in layers[1:] if max(abs(a - b) for a, b in zip(layer.bbox, box, strict=True)) <= 2]
        assert len(match) == 1, (colour_name, [layer.bbox for layer in layers])
        layer = match[0]
        assert colour_name in layer.name and colour_name.lower() in layer.description.lower()
        expected_norm = (box[0] * 1000 / 900, box[1] * 1000 / 640, box[2] * 1000 / 900, box[3] * 1000 / 640)
        assert max(abs(a - b) for a, b in zip(layer.normalized, expected_norm, strict=True)) <= 3
        assert layer.normalized == (round(layer.bbox[0] * 1000 / 900), round(layer.bbox[1] * 1000 / 640),
                                    round(layer.bbox[2] * 1000 / 900), round(layer.bbox[3] * 1000 / 640))
        assert layer.image.mode == "RGBA"
        assert layer.image.size == (layer.bbox[2] - layer.bbox[0], layer.bbox[3] - layer.bbox[1])
        px = np.asarray(layer.image)
        opaque = px[..., 3] == 255
        assert opaque.mean() > 0.97
        assert np.abs(px[opaque][:, :3].astype(int) - colour).max() == 0  # original pixels
    background = [layer for layer in layers if "White" in layer.name]
    assert background and background[0].z_index == 1  # largest region lies lowest


def test_decompose_layers_limits_and_busy_pictures(rect_image):
    small = rect_image.resize((300, 213), Image.Resampling.NEAREST)
    layers = decompose_layers(small, max_layers=3)
    assert len(layers) == 3
    assert decompose_layers(small, max_layers=1)[0].bbox == (0, 0, 300, 213)
    with pytest.raises(ValueError):
        decompose_layers(small, max_layers=0)
    # A busy generated picture still decomposes quickly into bounded, valid layers.
    pic = render_prompt_image("a cat under the moon at night with a house and trees", 1024, 1024, seed=1)
    start = time.perf_counter()
    layers = decompose_layers(pic)
    assert time.perf_counter() - start < 2
    assert 2 <= len(layers) <= 16
    for layer in layers[1:]:
        x1, y1, x2, y2 = layer.bbox
        assert 0 <= x1 < x2 <= 1024 and 0 <= y1 < y2 <= 1024
        assert layer.image.getchannel("A").getbbox() == (0, 0, x2 - x1, y2 - y1)


def test_label_regions_matches_connectivity():
    q = np.array([[1, 1, 0, 2],
                  [0, 1, 0, 2],
                  [1, 1, 0, 0],
                  [1, 0, 1, 1]], dtype=np.uint8)
    from studio.sandbox.layers import label_regions

    labels, count = label_regions(q)
    assert count == 6
    assert len({labels[0, 0], labels[0, 1], labels[1, 1], labels[2, 0], labels[3, 0]}) == 1
    assert labels[1, 0] != labels[0, 2]  # diagonal neighbours are not connected
    assert labels[3, 2] == labels[3, 3] != labels[0, 3]


# --------------------------------------------------------------------------- watermark and encoding


def test_watermark_changes_only_the_bottom_right(base_image):
    marked = stamp_watermark(base_image)
    assert marked.size == base_image.size and marked.mode == base_image.mode
    box = ImageChops.difference(marked, base_image).getbbox()
    assert box is not None
    assert box[0] > 320 * 0.4 and box[1] > 240 * 0.7 and box[2] <= 320 and box[3] <= 240
    assert mad(marked.crop(box), base_image.crop(box)) > 10  # clearly visible
    big = render_prompt_image("x", 1200, 900, seed=1)
    box = ImageChops.difference(stamp_watermark(big, "Sandbox"), big).getbbox()
    assert box[0] > 600 and box[1] > 750


def test_encode_formats_round_trip(base_image):
    png = encode_image(base_image)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert Image.open(io.BytesIO(png)).tobytes() == base_image.tobytes()
    jpeg = encode_image(base_image, "jpg", quality=90)
    assert jpeg.startswith(b"\xff\xd8\xff")
    assert Image.open(io.BytesIO(jpeg)).size == base_image.size
    assert len(encode_image(base_image, "jpeg", quality=10)) < len(jpeg)
    webp = encode_image(base_image, "webp", quality=80)
    assert webp[:4] == b"RIFF" and webp[8:12] == b"WEBP"
    assert Image.open(io.BytesIO(webp)).size == base_image.size
    rgba = base_image.convert("RGBA")
    assert Image.open(io.BytesIO(encode_image(rgba, "jpeg"))).mode == "RGB"
    assert Image.open(io.BytesIO(encode_image(rgba, "png"))).mode == "RGB"  # opaque unless asked


def test_encode_transparency():
    img = Image.new("RGB", (60, 40), (255, 255, 255))
    ImageDraw.Draw(img).ellipse((10, 5, 50, 35), fill=(200, 20, 20))
    for fmt in ("png", "webp"):
        out = Image.open(io.BytesIO(encode_image(img, fmt, transparent=True)))
        assert out.mode == "RGBA"
        assert out.getpixel((0, 0))[3] == 0 and out.getpixel((30, 20))[3] == 255
    keep = Image.new("RGBA", (8, 8), (1, 2, 3, 77))
    assert Image.open(io.BytesIO(encode_image(keep, "png", transparent=True))).getpixel((0, 0)) == (1, 2, 3, 77)
    with pytest.raises(ValueError):
        encode_image(img, "jpeg", transparent=True)
    with pytest.raises(ValueError):
        encode_image(img, "gif")
    with pytest.raises(ValueError):
        encode_image(img, "jpeg", quality=101)


def test_decompose_layers_gives_a_handful_of_meaningful_layers():
    """Background, subjects and text, like the real layered model; not dozens of colour fragments."""
    pic = render_prompt_image("poster of a cat under the moon at night with a house and trees", 1024, 1024, seed=1)
    layers = decompose_layers(pic)
    names = [layer.name for layer in layers]
    assert 4 <= len(layers) <= 7, names
    assert names[0] == "Base image" and names[1].endswith("background") and layers[1].bbox == (0, 0, 1024, 1024)
    assert sum("subject" in name for name in names) >= 1
    text = layers[-1]
    assert text.name.startswith("Text") and text.bbox[1] > 850  # the caption along the bottom
    # The background has the subjects lifted out: where a subject was, the background differs.
    subject = next(layer for layer in layers if "subject" in layer.name)
    x1, y1, x2, y2 = subject.bbox
    before = np.asarray(pic.crop(subject.bbox), dtype=int)
    after = np.asarray(layers[1].image.convert("RGB").crop(subject.bbox), dtype=int)
    assert np.abs(before - after).mean() > 5
