"""Named regions of the offline image model's pictures, so an edit can act on "the cat" or "the sky".

While a scene is painted, every element it draws is noted with its box (0..1 of the frame): the
sun, each cloud, the cat, the house, a circle... The note travels with the picture as a PNG text
chunk (``studio-scene``), the way image tools keep their generation parameters, and comes back
when the picture is sent to be edited. A picture without the note (an upload, a JPEG) is
segmented instead (see :mod:`studio.sandbox.layers`) and its regions are named by colour.

Looking a region up by name is deterministic: the kind named (with synonyms and plurals), then a
colour word and a position word if given, then the largest. Masks are the pixels of the box that
stand out from the box's border, so removing the cat heals the cat's outline, not a rectangle.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from studio.sandbox.layers import decompose_layers
from studio.sandbox.palette import COLOR_WORDS, Palette
from studio.sandbox.scene_elements import draw_boat, draw_cat, draw_flower, draw_house, draw_shape, draw_tree

SCENE_KEY = "studio-scene"
# Kinds a name can point at, with the words people use for them.
KIND_WORDS: dict[str, tuple[str, ...]] = {
    "sun": ("sun",), "moon": ("moon",), "cloud": ("cloud",), "bird": ("bird", "seagull", "gull"),
    "cat": ("cat", "kitten", "kitty"), "tree": ("tree", "pine"), "house": ("house", "home", "cabin", "cottage"),
    "flower": ("flower", "tulip", "daisy"), "boat": ("boat", "ship", "sailboat", "yacht"),
    "circle": ("circle", "ball", "dot", "orb"), "square": ("square", "box", "block"), "triangle": ("triangle",),
    "hexagon": ("hexagon",), "heart": ("heart",), "star": ("star",), "ring": ("ring",),
    "mountain": ("mountain", "mountains", "hill", "hills", "peak"), "city": ("city", "skyline", "building", "buildings"),
    "sky": ("sky",), "sea": ("sea", "ocean", "water", "lake"), "ground": ("ground", "grass", "field", "land"),
    "subject": ("subject", "object", "shape", "thing"),
}
WORD_KIND = {w: kind for kind, words in KIND_WORDS.items() for w in words}
# Regions that are the setting rather than a thing in it: recoloured or restyled, never removed.
BACKDROPS = frozenset({"sky", "sea", "ground", "mountain", "city"})
_NOUN = "|".join(sorted(WORD_KIND, key=len, reverse=True))
_COLOUR = "|".join(sorted(COLOR_WORDS, key=len, reverse=True))
_POSITION = r"left|right|top|bottom|upper|lower|middle|centre|center"
# "the red cat on the left", "the clouds", "all the stars", "the left tree"
TARGET_RE = re.compile(
    rf"\b(?P<all>all\s+(?:of\s+)?)?the\s+(?:(?P<pos1>{_POSITION})(?:most)?\s+)?(?:(?P<colour>{_COLOUR})\s+)?"
    rf"(?P<noun>{_NOUN})(?P<plural>e?s)?\b(?:\s+(?:on|at|in)\s+the\s+(?P<pos2>{_POSITION}))?"
)
REMOVE_RE = re.compile(r"\b(?:remove|erase|delete|get\s+rid\s+of|take\s+out|take\s+away|clear)\b\s+(?:all\s+)?(?:of\s+)?the\b")
WHITE = (255, 255, 255)
WHITE_PALETTE = Palette(*(WHITE,) * 9, night=False)
# Stand-out threshold (RGB distance from the box's border colour) for a region's mask.
MASK_CONTRAST = 36.0


@dataclass(frozen=True)
class Region:
    """One named thing in a picture: its kind, its box (x1, y1, x2, y2 in 0..1) and colour name."""

    kind: str
    box: tuple[float, float, float, float]
    colour: str = ""
    # How it was drawn, for its exact outline: (x / W, y / H, size / W, pine or angle); empty if unknown.
    shape: tuple[float, ...] = ()

    def pixels(self, size: tuple[int, int]) -> tuple[int, int, int, int]:
        W, H = size
        x1, y1, x2, y2 = self.box
        left, top = max(0, int(x1 * W)), max(0, int(y1 * H))
        return left, top, max(left + 1, min(W, round(x2 * W))), max(top + 1, min(H, round(y2 * H)))


class SceneNotes:
    """The regions noted while painting, in canvas pixels, made relative when the painting is done."""

    def __init__(self, size: tuple[int, int]) -> None:
        self.size = size
        self.regions: list[Region] = []

    def add(self, kind: str, x1: float, y1: float, x2: float, y2: float, colour: str = "",
            shape: tuple[float, ...] = ()) -> None:
        W, H = self.size
        box = (max(0.0, x1 / W), max(0.0, y1 / H), min(1.0, x2 / W), min(1.0, y2 / H))
        if box[2] > box[0] and box[3] > box[1]:
            self.regions.append(Region(kind, tuple(round(v, 4) for v in box), colour,  # type: ignore[arg-type]
                                       tuple(round(v, 5) for v in shape)))

    def element(self, kind: str, x: float, y: float, s: float, colour: str = "", extra: float = 0.0) -> None:
        """An element drawn at (x, y) with size ``s`` (see :func:`element_box`); ``extra`` is a
        tree's pine flag or a shape's angle."""
        W, H = self.size
        self.add(kind, *element_box(kind, x, y, s), colour, (x / W, y / H, s / W, extra))


def element_box(kind: str, x: float, y: float, s: float) -> tuple[float, float, float, float]:
    """The box of an element as :mod:`studio.sandbox.scene_elements` draws it at (x, y) with size s
    (a radius for round things and shapes, a height for things standing on y)."""
    if kind == "sun":
        return x - 1.3 * s, y - 1.3 * s, x + 1.3 * s, y + 1.3 * s
    if kind in ("bar", "arc"):
        return x - 1.6 * s, y - 1.6 * s, x + 1.6 * s, y + 1.6 * s
    if kind == "cloud":
        return x - 0.62 * s, y - 0.3 * s, x + 0.62 * s, y + 0.15 * s
    if kind == "bird":
        return x - s, y - 0.5 * s, x + s, y + 0.5 * s
    if kind == "cat":
        return x - 0.32 * s, y - 1.04 * s, x + 0.6 * s, y + 0.04 * s
    if kind == "tree":
        return x - 0.5 * s, y - 1.12 * s, x + 0.5 * s, y
    if kind == "house":
        return x - 0.64 * s, y - 1.07 * s, x + 0.64 * s, y
    if kind == "flower":
        return x - s, y - 4.0 * s, x + s, y
    if kind == "boat":
        return x - 0.62 * s, y - 1.22 * s, x + 0.62 * s, y + 0.02 * s
    return x - s, y - s, x + s, y + s  # moon and the geometric shapes


def attach(image: Image.Image, regions: list[Region]) -> Image.Image:
    image.info[SCENE_KEY] = json.dumps([[r.kind, list(r.box), r.colour, list(r.shape)] for r in regions])
    return image


def noted(image: Image.Image) -> list[Region] | None:
    """The regions noted on a picture the sandbox made, or None for any other picture."""
    raw = image.info.get(SCENE_KEY)
    if not isinstance(raw, str):
        return None
    try:
        return [Region(str(kind), (float(b[0]), float(b[1]), float(b[2]), float(b[3])), str(colour),
                       tuple(float(v) for v in shape[:4]))
                for kind, b, colour, shape in json.loads(raw)]
    except (ValueError, TypeError, IndexError):
        return None


def after_cover(regions: list[Region], src: tuple[int, int], dst: tuple[int, int]) -> list[Region]:
    """The boxes after :func:`scene.cover` scaled and centre-cropped a ``src`` picture to ``dst``."""
    (w, h), (W, H) = src, dst
    scale = max(W / w, H / h)
    cw, ch = W / scale / w, H / scale / h  # the kept share of each side
    ox, oy = (1 - cw) / 2, (1 - ch) / 2
    moved = []
    for r in regions:
        x1, y1, x2, y2 = r.box
        box = ((x1 - ox) / cw, (y1 - oy) / ch, (x2 - ox) / cw, (y2 - oy) / ch)
        box = (max(0.0, box[0]), max(0.0, box[1]), min(1.0, box[2]), min(1.0, box[3]))
        shape = r.shape and ((r.shape[0] - ox) / cw, (r.shape[1] - oy) / ch, r.shape[2] / cw, r.shape[3])
        if box[2] > box[0] and box[3] > box[1]:
            moved.append(replace(r, box=box, shape=shape))
    return moved


def segmented(image: Image.Image) -> list[Region]:
    """Regions of a picture the sandbox did not make: its subjects, named by colour, and its background."""
    W, H = image.size
    regions = []
    for layer in decompose_layers(image)[2:]:
        x1, y1, x2, y2 = layer.bbox
        kind = "text" if layer.name.startswith("Text") else "subject"
        regions.append(Region(kind, (x1 / W, y1 / H, x2 / W, y2 / H), layer.name.split(" ")[0].lower()))
    return regions


@dataclass(frozen=True)
class Target:
    """What an instruction points at: the regions, whether to remove them, and the words that named them."""

    regions: tuple[Region, ...]
    remove: bool
    span: tuple[int, int]


def _position_score(region: Region, position: str) -> float:
    cx, cy = (region.box[0] + region.box[2]) / 2, (region.box[1] + region.box[3]) / 2
    return {"left": -cx, "right": cx, "top": -cy, "upper": -cy, "bottom": cy, "lower": cy}.get(
        position, -abs(cx - 0.5) - abs(cy - 0.5))


def _area(region: Region) -> float:
    return (region.box[2] - region.box[0]) * (region.box[3] - region.box[1])


def find_target(instruction: str, regions: list[Region]) -> Target | None:
    """The region(s) ``instruction`` names ("the cat", "all the clouds", "the red circle on the left")."""
    text = instruction.lower()
    for m in TARGET_RE.finditer(text):
        kind = WORD_KIND[m.group("noun")]
        same = [r for r in regions if r.kind == kind or (kind == "subject" and r.kind not in BACKDROPS)]
        if not same and kind != "subject":
            continue
        colour = m.group("colour")
        if colour:
            same = [r for r in same if r.colour == colour] or same
        if not same:
            continue
        plural = bool(m.group("plural")) or bool(m.group("all"))
        position = m.group("pos1") or m.group("pos2") or ""
        if not plural:
            # Deterministic: by position when one is named, else the largest; ties by place.
            same = [max(same, key=lambda r: (_position_score(r, position) if position else _area(r),
                                             -r.box[1], -r.box[0]))]
        removal = REMOVE_RE.search(text[max(0, m.start() - 30):m.start() + 4]) is not None
        return Target(tuple(same), removal and kind not in BACKDROPS, m.span())
    return None


def silhouette(region: Region, size: tuple[int, int]) -> Image.Image | None:
    """The exact outline of an element the sandbox drew (redrawn in white on black), or None."""
    if len(region.shape) != 4 or region.kind in ("cloud", "bird"):  # soft things: found by contrast
        return None
    W, H = size
    x, y, s, extra = region.shape[0] * W, region.shape[1] * H, region.shape[2] * W, region.shape[3]
    canvas = Image.new("RGB", size, (0, 0, 0))
    d = ImageDraw.Draw(canvas)
    kind = region.kind
    if kind == "cat":
        draw_cat(d, x, y, s, WHITE, WHITE)
    elif kind == "tree":
        draw_tree(d, x, y, s, WHITE, bool(extra))
    elif kind == "house":
        draw_house(d, x, y, s, WHITE_PALETTE)
    elif kind == "flower":
        draw_flower(d, x, y, s, WHITE, WHITE)
    elif kind == "boat":
        draw_boat(d, x, y, s, WHITE_PALETTE)
    elif kind == "sun":
        d.ellipse((x - 1.25 * s, y - 1.25 * s, x + 1.25 * s, y + 1.25 * s), fill=WHITE)
    elif kind == "moon":
        d.ellipse((x - s, y - s, x + s, y + s), fill=WHITE)
    else:
        draw_shape(d, kind, x, y, s, (*WHITE, 255), extra)
    return canvas.convert("L").point(lambda v: 255 if v else 0)


def region_mask(image: Image.Image, region: Region) -> Image.Image:
    """An L mask (255 = the thing) over the whole picture: the pixels of the region's box that stand
    out from the colour along the box's border, grown a little and softened; the box's inscribed
    ellipse when nothing stands out (a thing the colour of what is around it)."""
    left, top, right, bottom = region.pixels(image.size)
    crop = np.asarray(image.convert("RGB").crop((left, top, right, bottom)), dtype=np.float32)
    mask = Image.new("L", image.size, 0)
    if region.kind in BACKDROPS:
        mask.paste(255, (left, top, right, bottom))
        return mask
    outline = silhouette(region, image.size)
    if outline is not None:
        return _soften(outline, image.size)
    border = np.concatenate([crop[0], crop[-1], crop[:, 0], crop[:, -1]])
    distance = np.linalg.norm(crop - np.median(border, axis=0), axis=2)
    inside = distance > MASK_CONTRAST
    if inside.mean() < 0.04:
        ImageDraw.Draw(mask).ellipse((left, top, right - 1, bottom - 1), fill=255)
    else:
        mask.paste(Image.fromarray((inside * 255).astype(np.uint8), "L"), (left, top))
    return _soften(mask, image.size)


def _soften(mask: Image.Image, size: tuple[int, int]) -> Image.Image:
    """Grown a little (anti-aliased edges and glows belong to the thing) and feathered."""
    grow = max(1, round(min(size) / 200)) * 2 + 1
    return mask.filter(ImageFilter.MaxFilter(grow)).filter(ImageFilter.GaussianBlur(grow / 3))
