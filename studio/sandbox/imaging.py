"""Offline image model: real, deterministic pictures made with Pillow.

On an install without vendor keys the gateway answers image requests from this module, so
its output is what users see first. Pictures therefore have to look intentional and be
visibly derived from the prompt and from any input images, and the same request must always
give the same pixels so responses are reproducible and cacheable. Everything here is a pure
function over PIL images; no Django, no network.

Scene painting lives in :mod:`studio.sandbox.scene`, layer decomposition in
:mod:`studio.sandbox.layers`; this module is the public surface.
"""

from __future__ import annotations

import hashlib
import io
import math
import random
import re
from dataclasses import replace
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageEnhance, ImageFilter, ImageFont, ImageOps, ImageStat

from . import scene
from .layers import Layer, decompose_layers

__all__ = [
    "ASPECT_RATIOS_31_FLASH",
    "IMAGE_TIERS",
    "Layer",
    "decompose_layers",
    "draw_caption",
    "draw_label",
    "encode_image",
    "inpaint",
    "outpaint",
    "render_composition",
    "render_edit",
    "render_prompt_image",
    "render_thought_draft",
    "seed_from",
    "sequential_set",
    "stamp_watermark",
    "tier_size",
]

RGB = tuple[int, int, int]

# --------------------------------------------------------------------------- sizes

ASPECT_RATIOS_31_FLASH: tuple[str, ...] = (
    "1:1", "16:9", "9:16", "4:3", "3:4", "3:2", "2:3", "4:5", "5:4", "21:9", "1:4", "4:1", "1:8", "8:1",
)
IMAGE_TIERS: tuple[str, ...] = ("512", "1K", "2K", "4K")

# Output sizes of the 3.1 Flash Image model per tier. They are not exact ratios (the vendor
# rounds to multiples of 8/16), so they are tabulated rather than computed. The vendor table
# lists 21:9 at the 512 tier with a typo; 792x336 is the value consistent with the other tiers.
_TIER_TABLE: dict[str, tuple[tuple[int, int], ...]] = {
    "1:1": ((512, 512), (1024, 1024), (2048, 2048), (4096, 4096)),
    "16:9": ((688, 384), (1376, 768), (2752, 1536), (5504, 3072)),
    "9:16": ((384, 688), (768, 1376), (1536, 2752), (3072, 5504)),
    "4:3": ((600, 448), (1200, 896), (2400, 1792), (4800, 3584)),
    "3:4": ((448, 600), (896, 1200), (1792, 2400), (3584, 4800)),
    "3:2": ((632, 424), (1264, 848), (2528, 1696), (5056, 3392)),
    "2:3": ((424, 632), (848, 1264), (1696, 2528), (3392, 5056)),
    "4:5": ((464, 576), (928, 1152), (1856, 2304), (3712, 4608)),
    "5:4": ((576, 464), (1152, 928), (2304, 1856), (4608, 3712)),
    "21:9": ((792, 336), (1584, 672), (3168, 1344), (6336, 2688)),
    "1:4": ((256, 1024), (512, 2048), (1024, 4096), (2048, 8192)),
    "4:1": ((1024, 256), (2048, 512), (4096, 1024), (8192, 2048)),
    "1:8": ((192, 1536), (384, 3072), (768, 6144), (1536, 12288)),
    "8:1": ((1536, 192), (3072, 384), (6144, 768), (12288, 1536)),
}

# Generous but finite: the largest tier is 12288x1536 (19 MP); anything far beyond is a bug or abuse.
MAX_SIDE = 16384
MAX_PIXELS = 40_000_000


def tier_size(ratio: str, tier: str) -> tuple[int, int]:
    """Pixel size (width, height) of a Gemini image tier ("512", "1K", "2K", "4K") at an aspect ratio.

    The tier is case-insensitive ("1k" works) because clients send both spellings.
    """
    sizes = _TIER_TABLE.get(ratio.strip())
    if sizes is None:
        raise ValueError(f"unsupported aspect ratio {ratio!r}; expected one of {', '.join(ASPECT_RATIOS_31_FLASH)}")
    key = tier.strip().upper()
    if key not in IMAGE_TIERS:
        raise ValueError(f"unsupported image size {tier!r}; expected one of {', '.join(IMAGE_TIERS)}")
    return sizes[IMAGE_TIERS.index(key)]


def _check_size(width: int, height: int) -> None:
    if width < 1 or height < 1 or width > MAX_SIDE or height > MAX_SIDE or width * height > MAX_PIXELS:
        raise ValueError(f"unsupported image size {width}x{height}")


# --------------------------------------------------------------------------- seeds


def seed_from(*parts: str | int | bytes | None) -> int:
    """Stable unsigned 64-bit seed from strings, ints and bytes.

    hashlib rather than ``hash()`` because Python salts string hashes per process, and seeds must
    be identical across processes and restarts. Each part is tagged and length-prefixed so
    ("ab", "c") and ("a", "bc") differ.
    """
    h = hashlib.sha256()
    for part in parts:
        if part is None:
            tag, data = b"n", b""
        elif isinstance(part, bool):
            tag, data = b"b", b"1" if part else b"0"
        elif isinstance(part, int):
            tag, data = b"i", str(part).encode()
        elif isinstance(part, str):
            tag, data = b"s", part.encode("utf-8")
        elif isinstance(part, bytes | bytearray | memoryview):
            tag, data = b"y", bytes(part)
        else:
            raise TypeError(f"seed parts must be str, int, bytes or None, not {type(part).__name__}")
        h.update(tag + len(data).to_bytes(8, "big") + data)
    return int.from_bytes(h.digest()[:8], "big")


def _scene_seed(prompt: str, seed: int | None) -> int:
    # Whitespace differences should not change the picture; case and wording do.
    return seed_from("scene", " ".join(prompt.split()), seed)


# --------------------------------------------------------------------------- text


@lru_cache(maxsize=64)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled scalable font: always available, so captions never depend on system fonts."""
    return ImageFont.load_default(size=size)


def _text_width(font: ImageFont.FreeTypeFont | ImageFont.ImageFont, text: str) -> float:
    return font.getlength(text)


def _fit_line(font: ImageFont.FreeTypeFont | ImageFont.ImageFont, text: str, max_width: float) -> str:
    """Truncate with an ellipsis so a single line fits max_width."""
    if _text_width(font, text) <= max_width:
        return text
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _text_width(font, text[:mid].rstrip() + "…") <= max_width:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo].rstrip() + "…"


def _wrap(font: ImageFont.FreeTypeFont | ImageFont.ImageFont, text: str, max_width: float,
          max_lines: int) -> list[str]:
    """Greedy word wrap; overlong words are split, the last line gets an ellipsis if text remains."""
    lines: list[str] = []
    current = ""
    words = text.split()
    i = 0
    while i < len(words):
        word = words[i]
        candidate = f"{current} {word}".strip()
        if _text_width(font, candidate) <= max_width:
            current, i = candidate, i + 1
            continue
        if not current:  # a single word wider than the line: hard-split it
            cut = max(1, len(_fit_line(font, word, max_width).rstrip("…")))
            lines.append(word[:cut])
            words[i] = word[cut:]
        else:
            lines.append(current)
            current = ""
        if len(lines) == max_lines:
            break
    if current and len(lines) < max_lines:
        lines.append(current)
        current = ""
    if (i < len(words) or current) and lines:
        lines[-1] = _fit_line(font, lines[-1] + " …", max_width)
    return lines


def draw_caption(image: Image.Image, text: str, *, max_lines: int = 3, opacity: int = 150) -> int:
    """Write ``text`` in a dark fading band along the bottom of ``image`` (in place).

    Drawn at full output resolution (never upscaled) so the text stays crisp and legible. The
    font scales with the short side of the image. Returns the band height in pixels (0 if the
    text is empty). Works on RGB and RGBA images.
    """
    text = " ".join(text.split())
    if not text:
        return 0
    W, H = image.size
    opacity = max(0, min(255, opacity))
    size = max(10, min(180, round(min(W, H) * 0.04)))
    font = _font(size)
    pad = round(size * 0.7)
    line_h = round(size * 1.28)
    fits = max(1, int((H * 0.32 - 2 * pad) // line_h))  # keep the band from swallowing short images
    lines = _wrap(font, text, W - 2 * pad, min(max_lines, fits))
    band = len(lines) * line_h + 2 * pad
    fade = round(band * 0.6)
    top = max(0, H - band - fade)
    # Scrim: transparent at the top of the fade, then a steady dark band behind the text.
    col = np.concatenate([np.linspace(0, opacity, H - band - top), np.full(min(band, H), float(opacity))])
    overlay = Image.new("RGBA", (W, H - top), (8, 8, 12, 0))
    overlay.putalpha(Image.fromarray(col.astype(np.uint8).reshape(-1, 1), "L").resize(overlay.size))
    d = ImageDraw.Draw(overlay)
    y = H - band + pad - top
    shadow = max(1, size // 16)
    for line in lines:
        d.text((pad + shadow, y + shadow), line, font=font, fill=(0, 0, 0, 200))
        d.text((pad, y), line, font=font, fill=(255, 255, 255, 255))
        y += line_h
    region = Image.alpha_composite(image.crop((0, top, W, H)).convert("RGBA"), overlay)
    image.paste(region if image.mode == "RGBA" else region.convert(image.mode), (0, top))
    return band


def draw_label(image: Image.Image, text: str, corner: str = "top-left", *, scale: float = 0.026,
               max_width_frac: float = 0.6) -> tuple[int, int, int, int]:
    """A small rounded tag with text in one corner (in place); only pixels inside the tag change.

    Used for edit labels, step numbers and watermarks. Returns the tag box (x1, y1, x2, y2),
    x2/y2 exclusive.
    """
    W, H = image.size
    size = max(9, min(160, round(min(W, H) * scale)))
    font = _font(size)
    pad = max(3, round(size * 0.5))
    margin = max(2, round(size * 0.6))
    line = _fit_line(font, " ".join(text.split()), max(size, W * max_width_frac - 2 * pad))
    tw = math.ceil(_text_width(font, line))
    asc, desc = font.getmetrics() if hasattr(font, "getmetrics") else (size, 0)
    bw, bh = min(W, tw + 2 * pad), min(H, asc + desc + pad)
    x1 = margin if "left" in corner else W - margin - bw
    y1 = margin if "top" in corner else H - margin - bh
    x1, y1 = max(0, x1), max(0, y1)
    box = (x1, y1, min(W, x1 + bw), min(H, y1 + bh))
    region = image.crop(box).convert("RGBA")
    overlay = Image.new("RGBA", region.size, (0, 0, 0, 0))
    od = ImageDraw.Draw(overlay)
    od.rounded_rectangle((0, 0, region.width - 1, region.height - 1), radius=max(2, bh // 4), fill=(10, 10, 14, 150))
    od.text((pad, pad // 2), line, font=font, fill=(255, 255, 255, 240))
    region = Image.alpha_composite(region, overlay)
    image.paste(region if image.mode == "RGBA" else region.convert(image.mode), box[:2])
    return box


# --------------------------------------------------------------------------- text-to-image


def render_prompt_image(prompt: str, width: int, height: int, seed: int | None = None) -> Image.Image:
    """A deterministic RGB picture for ``prompt``: palette and layout from (prompt, seed), elements
    from the prompt's words, and the prompt itself as a caption.

    The scene is painted on a canvas of about a megapixel and resized, so a 4K picture costs
    about as much as a 1K one; only the caption is drawn at full size.
    """
    _check_size(width, height)
    img = scene.render_scene(prompt, _scene_seed(prompt, seed), width, height)
    draw_caption(img, prompt)
    return img


def render_thought_draft(prompt: str, width: int, height: int, seed: int | None = None) -> Image.Image:
    """A cheap, low-detail draft of what :func:`render_prompt_image` will produce.

    Same seed and therefore same layout as the final picture, painted tiny, posterized,
    softened and overlaid with a faint sketch grid, so it reads as "work in progress". Returned
    at the requested size; callers wanting a small thumbnail pass a small size.
    """
    _check_size(width, height)
    small = scene.render_scene(prompt, _scene_seed(prompt, seed), *_fit_within(width, height, 160))
    small = ImageOps.posterize(small, 3)
    small = ImageEnhance.Color(small).enhance(0.6).filter(ImageFilter.GaussianBlur(1.2))
    img = small.resize((width, height), Image.Resampling.BILINEAR)
    d = ImageDraw.Draw(img, "RGBA")
    step = max(8, min(width, height) // 8)
    lw = max(1, min(width, height) // 400)
    for x in range(step, width, step):
        d.line([(x, 0), (x, height)], fill=(255, 255, 255, 40), width=lw)
    for y in range(step, height, step):
        d.line([(0, y), (width, y)], fill=(255, 255, 255, 40), width=lw)
    return img


def _fit_within(width: int, height: int, longest: int) -> tuple[int, int]:
    s = min(1.0, longest / max(width, height))
    return max(1, round(width * s)), max(1, round(height * s))


def sequential_set(prompt: str, count: int, width: int, height: int, seed: int | None = None,
                   reference: Image.Image | None = None) -> list[Image.Image]:
    """``count`` related pictures that read as a sequence.

    All frames share the palette and layout (same seed); a time parameter moves the sun across
    the sky or rotates and grows the shapes, and each frame carries an "i/N" tag. A reference
    image, if given, sets the palette when the prompt names no colour and shows through each frame.
    """
    if count < 1:
        raise ValueError("count must be at least 1")
    _check_size(width, height)
    base_seed = _scene_seed(prompt, seed)
    hint = scene.dominant_colour(reference) if reference is not None else None
    ref = ImageOps.fit(reference.convert("RGB"), (width, height), Image.Resampling.LANCZOS) if reference else None
    frames = []
    for i in range(count):
        t = i / (count - 1) if count > 1 else 0.5
        img = scene.render_scene(prompt, base_seed, width, height, t=t, hint=hint)
        if ref is not None:
            img = Image.blend(img, ref, 0.3)
        draw_caption(img, prompt)
        draw_label(img, f"{i + 1}/{count}", "top-right", scale=0.045)
        frames.append(img)
    return frames


# --------------------------------------------------------------------------- edits

# (pattern, operation). Matches are applied in the order they appear in the instruction; when
# two patterns overlap the earlier, longer match wins ("black and white" is not a black tint).
_EDIT_RULES: tuple[tuple[str, str], ...] = (
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
_COLOUR_RE = re.compile(r"\b(" + "|".join(sorted(scene.COLOR_WORDS, key=len, reverse=True)) + r")\b")
_EDIT_ELEMENTS = ("sun", "moon", "star", "cloud", "bird", "cat", "tree", "house", "flower", "boat", "heart",
                  "circle", "square", "triangle", "hexagon")
_ELEMENT_RE = re.compile(r"\b(" + "|".join(_EDIT_ELEMENTS) + r"|kitten)(s|es)?\b")
_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "few": 3, "several": 4, "many": 7, "some": 3}
_NEGATION_RE = re.compile(r"\b(?:remove|erase|delete|without|no|minus|get rid of)\b")
_SKY_ELEMENTS = {"sun", "moon", "star", "cloud", "bird"}
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
            colour = scene.COLOR_WORDS[near[-1].group(1)]
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
            found.append((m.start(), m.end(), "tint", scene.COLOR_WORDS[m.group(1)]))
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
            return ImageOps.fit(out, (W, H), Image.Resampling.BICUBIC) if out.size != (W, H) else out
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
                        pal: scene.Palette) -> None:
    """Draw requested elements ("add a red star") straight onto the full-size picture."""
    W, H = img.size
    u = min(W, H)
    for kind, count, colour in elements:
        p = replace(pal, light=colour, accent=colour, dark=scene.mix(colour, (0, 0, 0), 0.55)) if colour else pal
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
            if kind == "sun":
                scene.draw_sun(img, x, y, s * 0.08, p)
            elif kind == "moon":
                scene.draw_moon(img, x, y, s * 0.07, p)
            elif kind == "cloud":
                mask = Image.new("L", img.size, 0)
                scene.draw_cloud(ImageDraw.Draw(mask), x, y, s * 0.3, rng)
                img.paste(colour or (250, 250, 250), (0, 0), mask.point(lambda v: v * 9 // 10))
            elif kind == "bird":
                scene.draw_bird(d, x, y, s * 0.035, scene.rgba(colour or (30, 30, 36), 230))
            elif kind == "cat":
                scene.draw_cat(d, x, y, s * 0.3, colour or (28, 26, 32), (250, 220, 90))
            elif kind == "tree":
                scene.draw_tree(d, x, y, s * 0.35, colour or (46, 110, 60), rng.random() < 0.5)
            elif kind == "house":
                scene.draw_house(d, x, y, s * 0.22, p)
            elif kind == "flower":
                scene.draw_flower(d, x, y, s * 0.03, fill, (50, 110, 50))
            elif kind == "boat":
                scene.draw_boat(d, x, y, s * 0.16, p)
            else:
                r = s * 0.1
                scene.draw_shape(d, kind, x + u * 0.01, y + u * 0.014, r, (0, 0, 0, 70), rng.uniform(-15, 15))
                scene.draw_shape(d, kind, x, y, r, scene.rgba(fill, 240), rng.uniform(-15, 15))


def _to_rgb(image: Image.Image, background: RGB = (255, 255, 255)) -> Image.Image:
    """Flatten to RGB; transparent areas become ``background`` instead of Pillow's arbitrary black."""
    if image.mode == "RGB":
        return image.copy()
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        flat = Image.new("RGBA", rgba.size, (*background, 255))
        return Image.alpha_composite(flat, rgba).convert("RGB")
    return image.convert("RGB")


def render_edit(base: Image.Image, instruction: str, seed: int | None = None,
                size: tuple[int, int] | None = None) -> Image.Image:
    """Edit ``base`` according to words in ``instruction``; the result stays visibly the same picture.

    Recognised words become operations applied in the order they appear: colour words tint,
    "warm"/"cool", "black and white", "sepia", "vintage", "brighter"/"darker", "blur",
    "sharpen", "mirror"/"flip", "rotate [N]", "invert", "poster", "pixelate", "sketch",
    "vignette" and more. Nouns such as "sun", "star", "cat" or "heart" are drawn onto the
    picture (a colour word right before one colours it). With nothing recognised a gentle
    stylisation is applied. A small label with the instruction goes in the top-left corner.
    Output is RGB at ``size`` (centre-cropped to fit) or the base's size.
    """
    img = _to_rgb(base)
    if size is not None and tuple(size) != img.size:
        _check_size(*size)
        img = ImageOps.fit(img, tuple(size), Image.Resampling.LANCZOS)
    text = " ".join(instruction.split())
    ops, elements = _parse_edit(text)
    k = _strength(text.lower())
    for op, arg in ops:
        img = _apply_op(img, op, arg, k, text.lower())
    rng = random.Random(seed_from("edit", text, seed))
    if elements:
        pal = scene.make_palette(scene.analyse_prompt(text), rng, scene.dominant_colour(img))
        _draw_edit_elements(img, elements, rng, pal)
    if not ops and not elements:
        hue = rng.uniform(0, 360)
        img = _enhance(ImageEnhance.Contrast, _enhance(ImageEnhance.Color, img, 1.2, 1.0), 1.06, 1.0)
        img = _tint(img, scene.hls(hue, 0.55, 0.6), 0.1)
        scene.vignette(img, 0.2)
    draw_label(img, f"Edit: {text}" if text else "Edit", "top-left")
    return img


# --------------------------------------------------------------------------- composition


def _best_grid(n: int, aw: float, ah: float) -> tuple[int, int]:
    """Columns and rows that give the largest square-ish cells for n tiles in an aw x ah area."""
    best, best_score = (1, n), -1.0
    for cols in range(1, n + 1):
        rows = math.ceil(n / cols)
        score = min(aw / cols, ah / rows)
        if score > best_score:
            best, best_score = (cols, rows), score
    return best


def _place_cutouts(canvas: Image.Image, tiles: list[Image.Image], area: tuple[int, int, int, int],
                   rng: random.Random) -> None:
    """Paste images as white-framed, slightly rotated prints with soft shadows, on a grid."""
    x0, y0, x1, y1 = area
    aw, ah = x1 - x0, y1 - y0
    cols, rows = _best_grid(len(tiles), aw, ah)
    cw, ch = aw / cols, ah / rows
    for i, tile in enumerate(tiles):
        r, c = divmod(i, cols)
        in_row = min(cols, len(tiles) - r * cols)
        offset = (cols - in_row) * cw / 2  # centre a partial last row
        src = tile.convert("RGBA")
        scale = min(cw * 0.8 / src.width, ch * 0.8 / src.height)
        src = src.resize((max(1, round(src.width * scale)), max(1, round(src.height * scale))),
                         Image.Resampling.LANCZOS)
        border = max(2, round(min(src.size) * 0.045))
        framed = Image.new("RGBA", (src.width + 2 * border, src.height + 2 * border), (250, 249, 244, 255))
        framed.alpha_composite(src, (border, border))
        angle = rng.uniform(-7, 7)
        framed = framed.rotate(angle, Image.Resampling.BICUBIC, expand=True)
        cx = x0 + offset + (c + 0.5) * cw + rng.uniform(-0.05, 0.05) * cw
        cy = y0 + (r + 0.5) * ch + rng.uniform(-0.05, 0.05) * ch
        px, py = round(cx - framed.width / 2), round(cy - framed.height / 2)
        blur = max(1.0, border * 1.2)
        pad = math.ceil(blur * 3)
        shadow = Image.new("L", (framed.width + 2 * pad, framed.height + 2 * pad), 0)
        shadow.paste(framed.getchannel("A").point(lambda v: v * 2 // 5), (pad, pad))
        shadow = shadow.filter(ImageFilter.GaussianBlur(blur))
        canvas.paste((0, 0, 0), (px - pad + border // 2, py - pad + border), shadow)
        canvas.paste(framed, (px, py), framed)


def render_composition(images: list[Image.Image], prompt: str, width: int, height: int,
                       seed: int | None = None) -> Image.Image:
    """A collage visibly built from every input image, captioned with the prompt.

    The first image fills the canvas as the background and the others are laid out as framed
    prints. A single image becomes a large framed print on a background painted from the
    prompt; no images at all gives a plain prompt picture.
    """
    _check_size(width, height)
    if not images:
        return render_prompt_image(prompt, width, height, seed)
    rng = random.Random(seed_from("composition", " ".join(prompt.split()), seed, len(images)))
    if len(images) == 1:
        canvas = scene.render_scene(prompt, _scene_seed(prompt, seed), width, height)
        tiles = list(images)
    else:
        canvas = ImageOps.fit(_to_rgb(images[0]), (width, height), Image.Resampling.LANCZOS)
        canvas = ImageEnhance.Brightness(canvas).enhance(0.88)  # let the prints stand out
        tiles = list(images[1:])
    probe = Image.new("RGB", (width, height))
    band = draw_caption(probe, prompt)  # measure the caption so prints stay clear of it
    margin = round(min(width, height) * 0.04)
    _place_cutouts(canvas, tiles, (margin, margin, width - margin, max(margin + 1, height - band - margin)), rng)
    draw_caption(canvas, prompt, opacity=200)  # darker: a background photo may carry text of its own
    return canvas


# --------------------------------------------------------------------------- inpaint / outpaint


def _mask_alpha(mask: Image.Image) -> Image.Image:
    """The "keep" channel of a mask as L: 255 keeps the pixel, 0 replaces it.

    Masks with alpha (RGBA, LA, PA, P with transparency) use their alpha, the OpenAI convention.
    Masks without alpha (L, 1, RGB) are read the same way, with luminance standing in for alpha:
    white keeps, black is edited. One rule for every mask type avoids surprises.
    """
    if mask.mode in ("RGBA", "LA", "PA") or (mask.mode == "P" and "transparency" in mask.info):
        return mask.convert("RGBA").getchannel("A")
    return mask.convert("L")


def _working_mode(image: Image.Image) -> Image.Image:
    if image.mode in ("RGB", "RGBA"):
        return image
    has_alpha = image.mode in ("LA", "PA") or (image.mode == "P" and "transparency" in image.info)
    return image.convert("RGBA" if has_alpha else "RGB")


def inpaint(image: Image.Image, mask: Image.Image | None, prompt: str, seed: int | None = None) -> Image.Image:
    """Repaint the masked area from the prompt, leaving every kept pixel byte-identical.

    Where the mask's alpha is 255 the output equals the input exactly; where it is 0 the pixel
    is replaced by a prompt picture, pulled toward the average colour of the kept area so it
    sits in the surroundings; partial alpha blends. ``mask=None`` uses the image's own alpha,
    as OpenAI does when no mask is sent. See :func:`_mask_alpha` for masks without alpha.
    Output mode is RGB or RGBA like the input (other modes are converted first).
    """
    img = _working_mode(image)
    if mask is None:
        if img.mode != "RGBA":
            raise ValueError("a mask is required for an image without transparency")
        keep = img.getchannel("A")
    else:
        if mask.size != img.size:
            raise ValueError(f"mask size {mask.size} does not match image size {img.size}")
        keep = _mask_alpha(mask)
    solid = keep.point(lambda v: 255 if v == 255 else 0)
    edit_box = ImageOps.invert(solid).getbbox()
    if edit_box is None:  # nothing to repaint
        return img.copy()
    # Paint the scene for the edited area only, so what the prompt asks for lands inside it.
    bw, bh = edit_box[2] - edit_box[0], edit_box[3] - edit_box[1]
    patch = scene.render_scene(prompt, _scene_seed(prompt, seed), bw, bh)
    if solid.getbbox() is not None:
        mean = tuple(round(c) for c in ImageStat.Stat(img.convert("RGB"), solid).mean[:3])
        patch = Image.blend(patch, Image.new("RGB", patch.size, mean), 0.28)
    fill = Image.new("RGB", img.size)
    fill.paste(patch, edit_box[:2])
    if img.mode == "RGBA":
        fill = fill.convert("RGBA")
    return Image.composite(img, fill, keep)


def outpaint(image: Image.Image, canvas_size: tuple[int, int], offset: tuple[int, int] | None = None,
             background: Image.Image | None = None, prompt: str = "", seed: int | None = None) -> Image.Image:
    """Place ``image`` unchanged on a larger canvas and fill the rest.

    The new area comes from ``background`` (scaled to cover the canvas) or, without one, from a
    prompt picture. Near the original the fill blends into a blurred extension of the image's
    own edges, so the seam is soft while the original pixels stay exactly as they were.
    ``offset`` is the top-left position of the image (default: centred); parts outside the
    canvas are cropped. Output is RGB, or RGBA for an image with transparency.
    """
    cw, ch = canvas_size
    _check_size(cw, ch)
    img = _working_mode(image)
    w, h = img.size
    ox, oy = offset if offset is not None else ((cw - w) // 2, (ch - h) // 2)
    if background is not None:
        fill = ImageOps.fit(_to_rgb(background), (cw, ch), Image.Resampling.LANCZOS)
    else:
        fill = scene.render_scene(prompt, _scene_seed(prompt, seed), cw, ch)
    x0, y0, x1, y1 = max(0, ox), max(0, oy), min(cw, ox + w), min(ch, oy + h)
    if x0 >= x1 or y0 >= y1:  # nothing of the image lands on the canvas
        return fill.convert(img.mode)
    crop = img.crop((x0 - ox, y0 - oy, x1 - ox, y1 - oy))
    if background is None:
        mean = tuple(round(c) for c in ImageStat.Stat(crop.convert("RGB")).mean[:3])
        fill = Image.blend(fill, Image.new("RGB", fill.size, mean), 0.2)

    # Edge extension and seam mask are built on a small canvas: they are blurry by nature.
    s = min(1.0, 512 / max(cw, ch))
    sw, sh = max(1, round(cw * s)), max(1, round(ch * s))
    sx0, sy0 = min(sw - 1, int(x0 * s)), min(sh - 1, int(y0 * s))
    sx1, sy1 = max(sx0 + 1, min(sw, math.ceil(x1 * s))), max(sy0 + 1, min(sh, math.ceil(y1 * s)))
    small = np.asarray(_to_rgb(crop).resize((sx1 - sx0, sy1 - sy0), Image.Resampling.BOX))
    padded = np.pad(small, ((sy0, sh - sy1), (sx0, sw - sx1), (0, 0)), mode="edge")
    feather = max(2.0, max(sw, sh) * 0.06)
    ext = Image.fromarray(padded, "RGB").filter(ImageFilter.GaussianBlur(feather * 0.35))
    seam = Image.new("L", (sw, sh), 0)
    ImageDraw.Draw(seam).rectangle((sx0 - feather, sy0 - feather, sx1 + feather, sy1 + feather), fill=255)
    seam = seam.filter(ImageFilter.GaussianBlur(feather * 0.5))
    out = Image.composite(ext.resize((cw, ch), Image.Resampling.BICUBIC), fill,
                          seam.resize((cw, ch), Image.Resampling.BILINEAR))
    if img.mode == "RGBA":
        out = out.convert("RGBA")
    out.paste(crop, (x0, y0))  # plain paste: the original pixels (alpha included) are copied exactly
    return out


# --------------------------------------------------------------------------- output


def stamp_watermark(image: Image.Image, text: str = "AI generated") -> Image.Image:
    """Return a copy with a visible tag in the bottom-right corner; nothing else changes."""
    img = image.copy() if image.mode in ("RGB", "RGBA") else image.convert("RGBA" if "A" in image.mode else "RGB")
    draw_label(img, text, "bottom-right", scale=0.03, max_width_frac=0.5)
    return img


def _with_transparency(image: Image.Image) -> Image.Image:
    """RGBA version of an image: its own alpha if it has one, else the background colour keyed out.

    The background is the colour most common among the four corners; pixels close to it become
    transparent with a soft ramp, so flat-background art (logos, stickers) comes out clean.
    """
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        return image.convert("RGBA")
    rgb = image.convert("RGB")
    arr = np.asarray(rgb)
    corners = [tuple(int(v) for v in arr[y, x]) for y in (0, -1) for x in (0, -1)]
    key = np.array(max(set(corners), key=corners.count), dtype=np.int16)
    dist = np.abs(arr.astype(np.int16) - key).max(axis=2)
    tol = 24
    alpha = np.clip((dist - tol) * (255 / tol), 0, 255).astype(np.uint8)
    out = rgb.convert("RGBA")
    out.putalpha(Image.fromarray(alpha, "L"))
    return out


def encode_image(image: Image.Image, fmt: str = "png", quality: int | None = None,
                 transparent: bool = False) -> bytes:
    """Encode to PNG, JPEG or WebP bytes.

    ``quality`` (0-100, higher is better) applies to JPEG and WebP and is what OpenAI's
    ``output_compression`` maps to (its default of 100 means best quality). ``transparent=True``
    keeps the image's alpha or keys out its background colour (PNG/WebP only; JPEG has no
    alpha, so that combination raises ValueError). Without it the output is opaque: any alpha
    is flattened onto white.
    """
    f = fmt.lower().strip().lstrip(".")
    f = "jpeg" if f == "jpg" else f
    if f not in ("png", "jpeg", "webp"):
        raise ValueError(f"unsupported output format {fmt!r}; expected png, jpeg or webp")
    if quality is not None and not 0 <= quality <= 100:
        raise ValueError("quality must be between 0 and 100")
    if transparent and f == "jpeg":
        raise ValueError("jpeg does not support transparency")
    img = _with_transparency(image) if transparent else (image if image.mode in ("RGB", "L") else _to_rgb(image))
    buf = io.BytesIO()
    if f == "png":
        img.save(buf, "PNG", compress_level=6)
    elif f == "jpeg":
        img.convert("RGB").save(buf, "JPEG", quality=90 if quality is None else quality)
    else:
        img.save(buf, "WEBP", quality=90 if quality is None else quality)
    return buf.getvalue()
