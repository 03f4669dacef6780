"""Reading a prompt and choosing colours for the offline image model.

The sandbox image model has no neural network, so a prompt is understood by its words: colour
words pick the palette, nouns such as "sun", "sea" or "cat" name drawable elements, and mood
words ("night", "pastel", "winter") shift light and saturation. This module turns a prompt into
those cues and the cues into a harmonious palette; :mod:`studio.sandbox.scene` paints with them.
"""

from __future__ import annotations

import colorsys
import random
import re
from dataclasses import dataclass

from PIL import Image

RGB = tuple[int, int, int]

COLOR_WORDS: dict[str, RGB] = {
    "red": (214, 48, 49),
    "crimson": (186, 22, 60),
    "scarlet": (224, 50, 36),
    "maroon": (120, 24, 40),
    "orange": (240, 128, 32),
    "amber": (244, 166, 36),
    "yellow": (245, 208, 50),
    "golden": (222, 168, 48),
    "gold": (222, 168, 48),
    "green": (52, 160, 84),
    "emerald": (20, 158, 110),
    "lime": (158, 212, 62),
    "olive": (126, 128, 50),
    "mint": (120, 220, 180),
    "teal": (22, 138, 140),
    "turquoise": (40, 192, 182),
    "cyan": (36, 190, 222),
    "blue": (42, 98, 214),
    "azure": (48, 132, 232),
    "navy": (22, 40, 112),
    "indigo": (72, 50, 164),
    "purple": (128, 60, 178),
    "violet": (142, 82, 204),
    "lavender": (178, 152, 222),
    "magenta": (202, 40, 162),
    "pink": (240, 122, 172),
    "rose": (226, 88, 120),
    "coral": (244, 118, 94),
    "peach": (248, 178, 140),
    "brown": (124, 80, 44),
    "beige": (222, 204, 170),
    "cream": (244, 236, 212),
    "black": (22, 22, 26),
    "white": (246, 246, 242),
    "gray": (128, 130, 134),
    "grey": (128, 130, 134),
    "silver": (190, 194, 202),
}

_ELEMENT_SYNONYMS: dict[str, tuple[str, ...]] = {
    "sun": ("sun", "sunny", "sunshine", "sunlight", "sunset", "sunrise", "dawn", "dusk"),
    "moon": ("moon", "moonlight", "moonlit", "lunar", "crescent"),
    "star": ("star", "starry", "starlit", "constellation", "galaxy"),
    "cloud": ("cloud", "cloudy", "sky"),
    "mountain": ("mountain", "hill", "peak", "alps", "volcano", "valley", "cliff"),
    "sea": ("sea", "ocean", "lake", "water", "beach", "wave", "river", "coast", "shore", "harbor",
            "harbour", "bay", "island"),
    "city": ("city", "town", "skyline", "building", "skyscraper", "street", "downtown", "metropolis",
             "tower"),
    "tree": ("tree", "forest", "wood", "woods", "pine", "jungle", "park", "oak", "palm"),
    "cat": ("cat", "kitten", "kitty"),
    "bird": ("bird", "seagull", "gull", "crow", "swallow", "eagle"),
    "flower": ("flower", "tulip", "garden", "bloom", "blossom", "meadow", "daisy", "bouquet"),
    "house": ("house", "home", "cabin", "cottage", "village", "hut", "barn", "castle"),
    "boat": ("boat", "ship", "sail", "sailboat", "yacht", "ferry"),
    "circle": ("circle", "round", "dot", "sphere", "ball", "bubble", "orb", "planet"),
    "square": ("square", "cube", "box", "rectangle", "block", "grid"),
    "triangle": ("triangle", "pyramid"),
    "heart": ("heart", "love"),
    "hexagon": ("hexagon", "polygon", "honeycomb"),
}

_MOOD_SYNONYMS: dict[str, tuple[str, ...]] = {
    "night": ("night", "midnight", "nighttime", "starry", "nocturnal", "moonlit", "evening"),
    "sunset": ("sunset", "sunrise", "dawn", "dusk", "twilight"),
    "pastel": ("pastel", "soft", "gentle", "dreamy", "calm", "serene", "minimal", "minimalist"),
    "neon": ("neon", "vibrant", "vivid", "electric", "cyberpunk", "synthwave", "psychedelic"),
    "winter": ("winter", "snow", "snowy", "ice", "icy", "frozen", "cold", "frost"),
    "autumn": ("autumn", "fall", "harvest", "halloween"),
    "spring": ("spring", "blossom", "bloom", "easter"),
    "dark": ("dark", "moody", "gloomy", "noir", "shadow", "stormy", "storm"),
}

_WORD_TO_ELEMENT = {w: e for e, words in _ELEMENT_SYNONYMS.items() for w in words}
_WORD_TO_MOOD = {w: m for m, words in _MOOD_SYNONYMS.items() for w in words}

LANDSCAPE_ELEMENTS = frozenset({"sun", "moon", "cloud", "mountain", "sea", "city", "tree", "bird", "flower",
                                "house", "boat", "cat"})
GEOMETRIC_ELEMENTS = ("circle", "square", "triangle", "star", "heart", "hexagon")
GROUND_ELEMENTS = frozenset({"tree", "house", "flower", "cat"})

# Default hues (main, accent) when the prompt names no colour but sets a mood: a sunset reads as
# orange and pink, a night as deep blue, which is what a person would expect to see.
_MOOD_HUES = {"sunset": (20.0, 330.0), "night": (228.0, 48.0), "winter": (205.0, 190.0),
              "autumn": (26.0, 45.0), "spring": (105.0, 330.0), "neon": (300.0, 190.0)}
# Sky hues a landscape may get when the prompt names no colour: mostly blues, some dusk tones.
_SKY_HUES = (195.0, 205.0, 212.0, 220.0, 228.0, 28.0, 265.0, 340.0)


# --------------------------------------------------------------------------- colour helpers


def clamp01(v: float) -> float:
    return 0.0 if v < 0 else 1.0 if v > 1 else v


def hls(hue_deg: float, lightness: float, saturation: float) -> RGB:
    """RGB from hue in degrees and lightness/saturation in 0..1 (HLS reads naturally for palettes)."""
    r, g, b = colorsys.hls_to_rgb((hue_deg % 360) / 360, clamp01(lightness), clamp01(saturation))
    return round(r * 255), round(g * 255), round(b * 255)


def to_hls(rgb: RGB) -> tuple[float, float, float]:
    """(hue degrees, lightness, saturation) of an RGB colour."""
    h, lum, s = colorsys.rgb_to_hls(rgb[0] / 255, rgb[1] / 255, rgb[2] / 255)
    return h * 360, lum, s


def mix(a: RGB, b: RGB, t: float) -> RGB:
    """Linear blend of two colours, t=0 gives a and t=1 gives b."""
    t = clamp01(t)
    return (round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t), round(a[2] + (b[2] - a[2]) * t))


def rgba(c: RGB, alpha: int) -> tuple[int, int, int, int]:
    return c[0], c[1], c[2], max(0, min(255, int(alpha)))


def colour_name(rgb: RGB) -> str:
    """A plain English name for a colour, used to name layers and describe regions."""
    h, lum, s = to_hls(rgb)
    if lum < 0.13:
        return "Black"
    if lum > 0.9 and s < 0.5:
        return "White"
    if s < 0.16:
        return "Light gray" if lum > 0.6 else "Dark gray" if lum < 0.3 else "Gray"
    if h < 14 or h >= 340:
        return "Maroon" if lum < 0.3 else "Red"
    if h < 40:
        return "Brown" if lum < 0.42 else "Orange"
    if h < 68:
        return "Olive" if lum < 0.33 else "Yellow"
    if h < 160:
        return "Green"
    if h < 195:
        return "Teal"
    if h < 252:
        return "Navy" if lum < 0.25 else "Blue"
    if h < 290:
        return "Purple"
    return "Pink" if lum > 0.55 else "Magenta"


# --------------------------------------------------------------------------- prompt analysis


@dataclass(frozen=True)
class PromptInfo:
    """What the painter takes from a prompt: named colours, drawable elements and moods."""

    words: tuple[str, ...]
    colors: tuple[RGB, ...]
    elements: tuple[str, ...]
    moods: frozenset[str]

    @property
    def landscape(self) -> bool:
        """Landscapes get a sky, a horizon and ground; everything else is an abstract composition."""
        if any(e in LANDSCAPE_ELEMENTS for e in self.elements):
            return True
        return "star" in self.elements and "night" in self.moods


def _lookup(word: str, table: dict[str, str]) -> str | None:
    if word in table:
        return table[word]
    # Cheap plural handling ("trees", "boxes") is enough for prompt keywords.
    for cut in (1, 2):
        if len(word) > cut + 2 and word.endswith("s") and word[:-cut] in table:
            return table[word[:-cut]]
    return None


def analyse_prompt(prompt: str) -> PromptInfo:
    """Split a prompt into the cues the painter understands (unknown words are simply ignored)."""
    words = tuple(re.findall(r"[a-z]+", prompt.lower()))
    colors: list[RGB] = []
    elements: list[str] = []
    moods: set[str] = set()
    for w in words:
        if w in COLOR_WORDS:
            if COLOR_WORDS[w] not in colors:
                colors.append(COLOR_WORDS[w])
            continue
        el = _lookup(w, _WORD_TO_ELEMENT)
        if el and el not in elements:
            elements.append(el)
        mood = _lookup(w, _WORD_TO_MOOD)
        if mood:
            moods.add(mood)
    return PromptInfo(words, tuple(colors), tuple(elements), frozenset(moods))


# --------------------------------------------------------------------------- palette


@dataclass(frozen=True)
class Palette:
    sky_top: RGB
    sky_mid: RGB
    sky_horizon: RGB
    ground_far: RGB
    ground_near: RGB
    accent: RGB
    accent2: RGB
    light: RGB
    dark: RGB
    night: bool


def make_palette(info: PromptInfo, rng: random.Random, hint: RGB | None = None) -> Palette:
    """Pick a harmonious palette; named colours dominate so "red" really gives a red picture."""
    # Draw every random number up front so the stream never depends on which words are present.
    r_hue = rng.uniform(0, 360)
    r_sat = rng.uniform(0.42, 0.7)
    r_scheme = rng.choice((35.0, 150.0, 180.0, 120.0, -35.0))
    r_jitter = rng.uniform(-10, 10)
    r_sky = rng.choice(_SKY_HUES)

    colours = list(info.colors) or ([hint] if hint is not None else [])
    moods = info.moods
    night = "night" in moods
    light_key = False
    named = bool(colours)
    accent_override: RGB | None = None
    if colours:
        h0, l0, s0 = to_hls(colours[0])
        if s0 < 0.15 or l0 < 0.1 or l0 > 0.94:  # black, white, grey: keep it muted
            sat, h0 = 0.08, r_hue
            night = night or l0 < 0.3
            light_key = l0 > 0.8
        else:
            sat = max(0.35, min(0.9, s0 * 0.9))
        if len(colours) > 1:
            h1, l1, s1 = to_hls(colours[1])
            ha = h1 if s1 >= 0.15 else h0 + 30
            if s1 < 0.15:
                accent_override = colours[1]
        else:
            # Analogous accents keep the named colour dominant across the whole picture.
            ha = h0 + (28 if r_scheme > 0 else -28)
    else:
        base = next((_MOOD_HUES[m] for m in ("sunset", "night", "winter", "autumn", "spring", "neon")
                     if m in moods), None)
        if base is None and info.landscape:
            base = (r_sky, r_sky + r_scheme)  # a believable sky; the ground gets natural colours
        h0 = base[0] + r_jitter if base else r_hue
        ha = base[1] + r_jitter if base else h0 + r_scheme
        sat = r_sat

    if "neon" in moods:
        sat = 0.92
    if "pastel" in moods or "winter" in moods:
        sat *= 0.6

    if night:
        levels = [0.08, 0.15, 0.3, 0.16, 0.08]
    elif light_key:
        levels = [0.8, 0.87, 0.94, 0.78, 0.66]
    else:
        levels = [0.36, 0.52, 0.76, 0.42, 0.27]
    if "pastel" in moods:
        levels = [v + (1 - v) * 0.35 for v in levels]
    if "dark" in moods:
        levels = [v * 0.6 for v in levels]

    natural = any(e in info.elements for e in ("tree", "flower", "mountain", "cat", "house"))
    if named:
        ground_hue = h0 + 18
    elif "autumn" in moods:
        ground_hue = 30 + r_jitter
    elif natural:
        ground_hue = 112 + r_jitter * 2
    else:
        ground_hue = ha
    ground_sat = sat * 0.75
    ground_levels = levels[3:5]
    if "winter" in moods:
        ground_sat, ground_levels = 0.18, [0.86, 0.78]

    horizon = mix(hls(h0 + 8, levels[2], sat), hls(ha, levels[2], sat * 0.9), 0.35)
    accent = accent_override or hls(ha, 0.7 if night else 0.56, min(0.95, sat + 0.2))
    accent2 = hls(h0 - 25 if named else ha + 150, 0.6, sat)
    light = mix(hls(ha, 0.88, 0.85), (255, 244, 214), 0.5)
    return Palette(
        sky_top=hls(h0 - 6, levels[0], sat),
        sky_mid=hls(h0, levels[1], sat * 0.95),
        sky_horizon=horizon,
        ground_far=hls(ground_hue, ground_levels[0], ground_sat),
        ground_near=hls(ground_hue + 6, ground_levels[1], ground_sat * 1.05),
        accent=accent,
        accent2=accent2,
        light=light,
        dark=hls(h0, 0.1 if not light_key else 0.22, sat * 0.5),
        night=night,
    )


def dominant_colour(image: Image.Image) -> RGB:
    """Most common colour of a small quantized copy: a cheap stand-in for "the image's colour"."""
    small = image.convert("RGB")
    small.thumbnail((64, 64))
    q = small.quantize(colors=4)
    counts = sorted(q.getcolors() or [], reverse=True)
    pal = q.getpalette() or []
    idx = counts[0][1] if counts else 0
    return pal[idx * 3], pal[idx * 3 + 1], pal[idx * 3 + 2]
