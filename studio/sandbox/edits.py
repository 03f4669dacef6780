"""Instruction-driven edits for the offline image model.

An edit instruction is read for words that map to image operations ("warmer", "black and white",
"blur", "mirror", colour words...) and for things to draw ("add a red star"). When it names a
region of the picture ("remove the cat", "make the sky pink", "pixelate the house"), the edit
acts on that region only (see :mod:`studio.sandbox.regions`): a removal fills the region from its
surroundings, colour words recolour it and style words restyle it. The result must stay
recognisably the input picture, which is what makes the sandbox edit believable.
"""

from __future__ import annotations

import random
import re
from dataclasses import replace

import numpy as np
from PIL import Image, ImageChops, ImageDraw, ImageEnhance, ImageFilter, ImageOps, ImageStat

from studio.sandbox import regions as named
from studio.sandbox import scene
from studio.sandbox.layers import heal
from studio.sandbox.palette import (
    COLOR_WORDS,
    RGB,
    Palette,
    analyse_prompt,
    dominant_colour,
    hls,
    make_palette,
    mix,
    rgba,
)

# (pattern, operation). Matches are applied in the order they appear in the instruction; when
# two patterns overlap the earlier, longer match wins ("black and white" is not a black tint).
_EDIT_RULES: tuple[tuple[str, str], ...] = (
    (r"\b(?:upscal\w*|upsampl\w*|super[\s-]?resolution|higher\s+resolution|enlarge)\b", "upscale"),
    (r"black\s*(?:and|&)\s*white|\bb\s*&\s*w\b|\bgr[ae]y\s*scale\b|\bmonochrome\b|\bnoir\b", "grayscale"),
    (r"\bsepia\b", "sepia"),
    (r"\b(?:vintage|retro|aged|antique|old[\s-]?(?:photo|school|fashioned))\b", "vintage"),
    (r"\b(?:invert(?:ed)?|negative)\b", "invert"),
    (r"\b(?:blur(?:ry|red)?|soft(?:en|er)?|dreamy|bokeh|out of focus)\b", "blur"),
    (r"\b(?:sharp(?:en|er)?|crisp(?:er)?)\b", "sharpen"),
    (r"\bflip(?:ped)?\s+vertical(?:ly)?\b|\bupside[\s-]down\b|\bvertical\s+flip\b", "flip"),
    (r"\b(?:mirror(?:ed)?|flip(?:ped)?)\b", "mirror"),
    (r"\brotat\w*(?:\s+(?:it|the\s+image|image|picture|by))*\s*(\d{1,3})?", "rotate"),
    (r"\btilt(?:ed)?\b", "tilt"),
    (r"\b(?:bright(?:er|en)?|light(?:er|en)?)\b", "brighter"),
    (r"\b(?:dark(?:er|en)?|dim(?:mer)?)\b", "darker"),
    (r"\b(?:night|nighttime|midnight)\b", "night"),
    (r"\b(?:sunset|sunrise|golden\s+hour)\b", "sunset"),
    (r"\bwarm(?:er|th)?\b", "warm"),
    (r"\b(?:cool(?:er)?|cold(?:er)?|icy)\b", "cool"),
    (r"\b(?:low|less)\s+contrast\b|\b(?:faded|flat)\b", "fade"),
    (r"\b(?:high|more)\s+contrast\b|\b(?:punchy|dramatic|contrast)\b", "contrast"),
    (r"\b(?:desaturat\w*|muted|washed[\s-]out)\b", "desaturate"),
    (r"\b(?:saturat\w*|vivid|vibrant|colou?rful)\b", "saturate"),
    (r"\b(?:poster\w*|pop[\s-]?art|comic|cartoon)\b", "poster"),
    (r"\b(?:pixel\w*|8[\s-]?bit|mosaic)\b", "pixelate"),
    (r"\b(?:sketch\w*|pencil|line[\s-]?art|outline)\b", "sketch"),
    (r"\bemboss\w*\b", "emboss"),
    (r"\bvignette\b", "vignette"),
)
_COLOUR_RE = re.compile(r"\b(" + "|".join(sorted(COLOR_WORDS, key=len, reverse=True)) + r")\b")
_EDIT_ELEMENTS = ("sun", "moon", "star", "cloud", "bird", "cat", "tree", "house", "flower", "boat", "heart",
                  "circle", "square", "triangle", "hexagon")
_ELEMENT_RE = re.compile(r"\b(" + "|".join(_EDIT_ELEMENTS) + r"|kitten)(s|es)?\b")
_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "few": 3, "several": 4, "many": 7, "some": 3}
_NEGATION_RE = re.compile(r"\b(?:remove|erase|delete|without|no|minus|get rid of)\b")
_SKY_ELEMENTS = {"sun", "moon", "star", "cloud", "bird"}
# Operations that move pixels: they apply to the whole picture, never to one region.
_GEOMETRIC_OPS = {"mirror", "flip", "rotate", "tilt", "upscale"}
_REMOVE_WORDS_RE = re.compile(r"\b(?:remove|erase|delete|get\s+rid\s+of|take\s+out|take\s+away|clear)\b")
RECOLOUR_AMOUNT = 0.85  # a named region's new colour replaces most of the old one
_GROUND_ELEMENTS = {"cat", "tree", "house", "flower", "boat"}


def _strength(instruction: str) -> float:
    if re.search(r"\b(?:slight(?:ly)?|a bit|a little|subtle|subtly|touch|hint)\b", instruction):
        return 0.55
    if re.search(r"\b(?:very|much|strong(?:ly)?|extreme(?:ly)?|a lot|really|super)\b", instruction):
        return 1.6
    return 1.0


def _parse_edit(instruction: str) -> tuple[list[tuple[str, object]], list[tuple[str, int, RGB | None]]]:
    """Operations (op, argument) in order of appearance, and elements to draw (kind, count, colour)."""
    text = instruction.lower()
    found: list[tuple[int, int, str, object]] = []
    for pattern, op in _EDIT_RULES:
        for m in re.finditer(pattern, text):
            arg: object = int(m.group(1)) if op == "rotate" and m.group(1) else None
            found.append((m.start(), m.end(), op, arg))
    elements: list[tuple[str, int, RGB | None]] = []
    colour_used: set[int] = set()
    for m in _ELEMENT_RE.finditer(text):
        before = text[max(0, m.start() - 40):m.start()]
        if _NEGATION_RE.search(" ".join(before.split()[-3:])):
            continue
        colour = None
        near = list(_COLOUR_RE.finditer(text, max(0, m.start() - 24), m.start()))
        if near and len(text[near[-1].end():m.start()].split()) <= 1:  # "a red star", "a red big star"
            colour = COLOR_WORDS[near[-1].group(1)]
            colour_used.add(near[-1].start())
        kind = "cat" if m.group(1) == "kitten" else m.group(1)
        count = 3 if m.group(2) else 1
        for word in reversed(before.split()[-3:]):  # "two hearts", "3 red stars", "a star"
            if word.isdigit() or word in _NUMBER_WORDS:
                count = min(12, max(1, int(word) if word.isdigit() else _NUMBER_WORDS[word]))
                break
        elements.append((kind, count, colour))
    for m in _COLOUR_RE.finditer(text):
        if m.start() not in colour_used:
            found.append((m.start(), m.end(), "tint", COLOR_WORDS[m.group(1)]))
    found.sort(key=lambda f: (f[0], -(f[1] - f[0])))
    ops: list[tuple[str, object]] = []
    taken_until = -1
    for start, end, op, arg in found:
        if start < taken_until:
            continue
        taken_until = end
        if (op, arg) not in ops:
            ops.append((op, arg))
    return ops, elements


def _lut(fr: float, fg: float, fb: float, add: RGB = (0, 0, 0)) -> list[int]:
    return [max(0, min(255, round(v * f + a))) for f, a in ((fr, add[0]), (fg, add[1]), (fb, add[2]))
            for v in range(256)]


def _tint(img: Image.Image, colour: RGB, amount: float) -> Image.Image:
    """Duotone toward a colour, keeping the picture's light and shade (a plain overlay would flatten it)."""
    toned = ImageOps.colorize(ImageOps.grayscale(img), black=(0, 0, 0), white=(255, 255, 255), mid=colour)
    return Image.blend(img, toned, max(0.0, min(1.0, amount)))


def _sepia(img: Image.Image, amount: float) -> Image.Image:
    toned = ImageOps.colorize(ImageOps.grayscale(img), black=(38, 24, 12), white=(255, 242, 210),
                              mid=(160, 124, 84))
    return Image.blend(img, toned, amount)


def _enhance(kind: type[ImageEnhance._Enhance], img: Image.Image, factor: float, k: float) -> Image.Image:
    return kind(img).enhance(1 + (factor - 1) * k)


def _apply_op(img: Image.Image, op: str, arg: object, k: float, instruction: str) -> Image.Image:
    W, H = img.size
    u = min(W, H)
    if op == "upscale":  # the resize to the larger size already happened; restore crisp edges
        return img.filter(ImageFilter.UnsharpMask(radius=max(1.0, u / 700), percent=60, threshold=3))
    if op == "grayscale":
        return ImageOps.grayscale(img).convert("RGB")
    if op == "sepia":
        return _sepia(img, min(1.0, 0.9 * k))
    if op == "vintage":
        out = _enhance(ImageEnhance.Contrast, _sepia(img, min(1.0, 0.5 * k)), 0.85, k)
        scene.vignette(out, 0.4)
        return out
    if op == "invert":
        return ImageOps.invert(img)
    if op == "blur":
        return img.filter(ImageFilter.GaussianBlur(max(1.0, u / 160 * k)))
    if op == "sharpen":
        return img.filter(ImageFilter.UnsharpMask(radius=max(1.0, u / 500), percent=round(150 * k), threshold=2))
    if op == "mirror":
        return ImageOps.mirror(img)
    if op == "flip":
        return ImageOps.flip(img)
    if op in ("rotate", "tilt"):
        deg = (int(arg) if isinstance(arg, int) else 90) if op == "rotate" else 8
        if re.search(r"counter|anti|\bleft\b", instruction):
            deg = -deg
        deg %= 360
        if deg % 90 == 0:
            out = img.transpose({90: Image.Transpose.ROTATE_270, 180: Image.Transpose.ROTATE_180,
                                 270: Image.Transpose.ROTATE_90}[deg]) if deg else img
            return scene.cover(out, (W, H))
        fill = tuple(round(c) for c in ImageStat.Stat(img).mean[:3])
        return img.rotate(-deg, Image.Resampling.BICUBIC, fillcolor=fill)  # clockwise, like people mean it
    if op == "brighter":
        return _enhance(ImageEnhance.Brightness, img, 1.3, k)
    if op == "darker":
        return _enhance(ImageEnhance.Brightness, img, 0.7, k)
    if op == "night":
        return _tint(_enhance(ImageEnhance.Brightness, img, 0.55, k), (30, 50, 120), 0.35)
    if op == "sunset":
        return _tint(img.point(_lut(1.08, 1.0, 0.85, (8, 0, 0))), (240, 120, 50), 0.3 * k)
    if op == "warm":
        return img.point(_lut(1 + 0.08 * k, 1 + 0.01 * k, 1 - 0.14 * k, (round(6 * k), 0, 0)))
    if op == "cool":
        return img.point(_lut(1 - 0.12 * k, 1 + 0.01 * k, 1 + 0.08 * k, (0, 0, round(8 * k))))
    if op == "contrast":
        return _enhance(ImageEnhance.Contrast, img, 1.45, k)
    if op == "fade":
        return _enhance(ImageEnhance.Brightness, _enhance(ImageEnhance.Contrast, img, 0.7, k), 1.05, k)
    if op == "saturate":
        return _enhance(ImageEnhance.Color, img, 1.6, k)
    if op == "desaturate":
        return _enhance(ImageEnhance.Color, img, 0.4, k)
    if op == "poster":
        return _enhance(ImageEnhance.Color, ImageOps.posterize(img, 3), 1.3, 1.0)
    if op == "pixelate":
        block = max(2, round(u / 48 / k))
        small = img.resize((max(1, W // block), max(1, H // block)), Image.Resampling.BOX)
        return small.resize((W, H), Image.Resampling.NEAREST)
    if op == "sketch":
        return ImageOps.grayscale(img).filter(ImageFilter.CONTOUR).convert("RGB")
    if op == "emboss":
        return img.filter(ImageFilter.EMBOSS)
    if op == "vignette":
        out = img.copy()
        scene.vignette(out, min(0.8, 0.45 * k))
        return out
    if op == "tint" and isinstance(arg, tuple):
        return _tint(img, arg, 0.45 * k)
    return img


def _draw_edit_elements(img: Image.Image, elements: list[tuple[str, int, RGB | None]], rng: random.Random,
                        pal: Palette, notes: named.SceneNotes) -> None:
    """Draw requested elements ("add a red star") straight onto the full-size picture, noting each."""
    W, H = img.size
    u = min(W, H)
    for kind, count, colour in elements:
        p = replace(pal, light=colour, accent=colour, dark=mix(colour, (0, 0, 0), 0.55)) if colour else pal
        fill = colour or pal.accent
        for _ in range(count):
            d = ImageDraw.Draw(img, "RGBA")
            x = W * rng.uniform(0.15, 0.85)
            if kind in _SKY_ELEMENTS:
                y = H * rng.uniform(0.12, 0.32)
            elif kind in _GROUND_ELEMENTS:
                y = H * rng.uniform(0.86, 0.92)
            else:
                y = H * rng.uniform(0.35, 0.6)
            s = u * rng.uniform(0.7, 1.0)
            scale = {"sun": 0.08, "moon": 0.07, "cloud": 0.3, "bird": 0.035, "cat": 0.3, "house": 0.22,
                     "flower": 0.045, "boat": 0.16}
            word = "" if colour is None else next((w for w, c in COLOR_WORDS.items() if c == colour), "")
            if kind in scale:
                notes.element(kind, x, y, s * scale[kind], word)
            else:  # drawn with a random angle or form: found by its contrast when named
                notes.add(kind, *named.element_box(kind, x, y, s * (0.35 if kind == "tree" else 0.1)), word)
            if kind == "sun":
                scene.draw_sun(img, x, y, s * 0.08, p)
            elif kind == "moon":
                scene.draw_moon(img, x, y, s * 0.07, p)
            elif kind == "cloud":
                mask = Image.new("L", img.size, 0)
                scene.draw_cloud(ImageDraw.Draw(mask), x, y, s * 0.3, rng)
                img.paste(colour or (250, 250, 250), (0, 0), mask.point(lambda v: v * 9 // 10))
            elif kind == "bird":
                scene.draw_bird(d, x, y, s * 0.035, rgba(colour or (30, 30, 36), 230))
            elif kind == "cat":
                scene.draw_cat(d, x, y, s * 0.3, colour or (28, 26, 32), (250, 220, 90))
            elif kind == "tree":
                scene.draw_tree(d, x, y, s * 0.35, colour or (46, 110, 60), rng.random() < 0.5)
            elif kind == "house":
                scene.draw_house(d, x, y, s * 0.22, p)
            elif kind == "flower":
                scene.draw_flower(d, x, y, s * 0.045, fill, (50, 110, 50))
            elif kind == "boat":
                scene.draw_boat(d, x, y, s * 0.16, p)
            else:
                r = s * 0.1
                scene.draw_shape(d, kind, x + u * 0.01, y + u * 0.014, r, (0, 0, 0, 70), rng.uniform(-15, 15))
                scene.draw_shape(d, kind, x, y, r, rgba(fill, 240), rng.uniform(-15, 15))


def is_upscale(instruction: str) -> bool:
    """True when the instruction asks only for a larger copy (no other operation or drawing)."""
    ops, elements = _parse_edit(" ".join(instruction.split()))
    return [op for op, _ in ops] == ["upscale"] and not elements


def fill_across(img: Image.Image, hole: Image.Image) -> Image.Image:
    """``img`` with the ``hole`` (L, 255 = hole) filled from its surroundings: each row bridged from
    the pixels left and right of it (landscapes are layered in rows: sky, hills, ground), then
    blended with a fill from every side and softened, so no streak or edge shows."""
    pixels = np.asarray(img.convert("RGB"), dtype=np.float32).copy()
    inside = np.asarray(hole) > 127
    columns = np.arange(pixels.shape[1])
    for y in np.flatnonzero(inside.any(axis=1)):
        gap, known = inside[y], ~inside[y]
        if known.any():
            for c in range(3):
                pixels[y, gap, c] = np.interp(columns[gap], columns[known], pixels[y, known, c])
    across = Image.fromarray(pixels.clip(0, 255).astype(np.uint8))
    around = heal(img.convert("RGB"), hole)
    blended = Image.blend(across, around, 0.35)
    radius = max(1.0, min(img.size) / 160)
    return Image.composite(blended.filter(ImageFilter.GaussianBlur(radius)), img,
                           hole.filter(ImageFilter.GaussianBlur(radius)))


def _edit_region(img: Image.Image, target: named.Target, rest: str, k: float) -> tuple[Image.Image, list[str]]:
    """Remove, recolour or restyle the target's regions; the words left say how. Returns the picture
    and the colour word the regions now have ("" when unchanged)."""
    mask = Image.new("L", img.size, 0)
    for region in target.regions:
        mask = ImageChops.lighter(mask, named.region_mask(img, region))
    if target.remove:  # a wider hole, so no outline of what was removed is left behind
        grow = max(1, round(min(img.size) / 120)) * 2 + 1
        return fill_across(img, mask.filter(ImageFilter.MaxFilter(grow))), []
    ops, _ = _parse_edit(rest)
    edited = img
    colours = []
    for op, arg in ops:
        if op in _GEOMETRIC_OPS:
            continue
        if op == "tint" and isinstance(arg, tuple):
            edited = _tint(edited, arg, RECOLOUR_AMOUNT)
            colours.append(next(w for w, c in COLOR_WORDS.items() if c == arg))
        else:
            edited = _apply_op(edited, op, arg, k, rest.lower())
    if not ops:  # named but no change asked for: make it stand out a little
        edited = _enhance(ImageEnhance.Contrast, _enhance(ImageEnhance.Color, img, 1.3, 1.0), 1.1, 1.0)
    return Image.composite(edited, img, mask), colours


def apply_edit(img: Image.Image, instruction: str, rng: random.Random,
               regions: list[named.Region] | None = None) -> tuple[Image.Image, list[named.Region] | None]:
    """Apply the operations and drawings ``instruction`` asks for to an RGB image.

    Operations run in the order their words appear; with nothing recognised a gentle
    stylisation (richer colour, a faint seeded tint, a soft vignette) keeps the edit visible.
    When the instruction names a region ("the cat", "all the clouds"), its colour and style words
    act on that region and "remove" fills it from its surroundings. ``regions`` are the picture's
    known regions (segmented when None and a region is named); returned as they are after the edit
    (None when the edit moved pixels, so the boxes no longer hold).
    """
    text = " ".join(instruction.split())
    k = _strength(text.lower())
    target = None
    if named.TARGET_RE.search(text.lower()):
        if regions is None:
            regions = named.segmented(img)
        target = named.find_target(text, regions)
    if target is not None:
        start, end = target.span
        rest = text[:start] + " " + text[end:]
        if target.remove:
            rest = _REMOVE_WORDS_RE.sub(" ", rest.lower())
        img, colours = _edit_region(img, target, rest, k)
        if target.remove:
            regions = [r for r in regions or [] if r not in target.regions]
        elif colours:
            regions = [replace(r, colour=colours[-1]) if r in target.regions else r for r in regions or []]
        ops, elements = _parse_edit(rest)
        ops = [(op, arg) for op, arg in ops if op in _GEOMETRIC_OPS]
    else:
        ops, elements = _parse_edit(text)
    for op, arg in ops:
        img = _apply_op(img, op, arg, k, text.lower())
    if any(op in _GEOMETRIC_OPS - {"upscale"} for op, _ in ops):
        regions = None
    if elements:
        pal = make_palette(analyse_prompt(text), rng, dominant_colour(img))
        notes = named.SceneNotes(img.size)
        _draw_edit_elements(img, elements, rng, pal, notes)
        if regions is not None:
            regions = [*regions, *notes.regions]
    if not ops and not elements and target is None:
        hue = rng.uniform(0, 360)
        img = _enhance(ImageEnhance.Contrast, _enhance(ImageEnhance.Color, img, 1.2, 1.0), 1.06, 1.0)
        img = _tint(img, hls(hue, 0.55, 0.6), 0.1)
        scene.vignette(img, 0.2)
    return img, regions
