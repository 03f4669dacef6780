"""Text on pictures for the offline image model: captions, corner tags and watermarks.

Pillow's bundled scalable font is used so text never depends on fonts installed on the host,
and text is always drawn at the final resolution so it stays crisp after any resizing.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont


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
    text is empty or the image is under 48 px, too small for legible text). Works on RGB and
    RGBA images.
    """
    text = " ".join(text.split())
    W, H = image.size
    if not text or min(W, H) < 48:  # thumbnails: text would be unreadable noise
        return 0
    opacity = max(0, min(255, opacity))
    size = max(10, min(180, round(min(W, H) * 0.04)))
    font = _font(size)
    pad = round(size * 0.7)
    line_h = round(size * 1.28)
    fits = max(1, int((H * 0.32 - 2 * pad) // line_h))  # keep the band from swallowing short images
    lines = _wrap(font, text, W - 2 * pad, min(max_lines, fits))
    band = min(H, len(lines) * line_h + 2 * pad)
    fade = round(band * 0.6)
    top = max(0, H - band - fade)
    # Scrim: transparent at the top of the fade, then a steady dark band behind the text.
    col = np.concatenate([np.linspace(0, opacity, H - band - top), np.full(band, float(opacity))])
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
