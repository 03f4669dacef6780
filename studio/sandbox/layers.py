"""Layer decomposition for the offline image model.

Layered-image models return a picture split into stacked RGBA layers. The sandbox does a real,
if simple, segmentation so the layers line up with what is in the picture: quantize colours on
a downscaled copy, find connected regions of one colour, keep the largest, and scale their
masks back to full resolution. Only Pillow and numpy are used.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageFilter, ImageStat

from .palette import colour_name

# Segmentation runs on a copy at most this large: enough to find regions a couple of pixels
# accurate at typical sizes, small enough that the pure-Python labelling stays fast.
ANALYSIS_MAX_SIDE = 384
PALETTE_COLOURS = 8
# Regions smaller than this share of the picture are anti-aliasing fringes or texture noise.
MIN_REGION_FRACTION = 0.002


@dataclass(frozen=True)
class Layer:
    """One layer of a decomposed image.

    ``bbox`` is (x1, y1, x2, y2) in pixels of the source image with x2/y2 exclusive, the same
    convention as ``Image.crop``; ``image`` is exactly that crop. ``normalized`` is the bbox
    scaled to 0..1000 of the source width/height and rounded, the convention vision models use.
    """

    image: Image.Image
    z_index: int
    name: str
    description: str
    bbox: tuple[int, int, int, int]
    normalized: tuple[int, int, int, int]


def _normalize(bbox: tuple[int, int, int, int], width: int, height: int) -> tuple[int, int, int, int]:
    x1, y1, x2, y2 = bbox
    return (round(x1 * 1000 / width), round(y1 * 1000 / height), round(x2 * 1000 / width),
            round(y2 * 1000 / height))


def _find(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]  # path halving keeps the trees flat
        i = parent[i]
    return i


def label_regions(q: np.ndarray) -> tuple[np.ndarray, int]:
    """4-connected components of equal values in a 2-D array; returns (labels, count).

    Works on horizontal runs rather than pixels: each run is a node, runs of the same value
    that overlap the run above are merged with union-find. Quantized pictures have few runs per
    row, so this is fast without scipy.
    """
    h, w = q.shape
    parent: list[int] = []
    row_runs: list[tuple[np.ndarray, list[int]]] = []
    prev: tuple[list[int], list[int], list[int], list[int]] | None = None
    for y in range(h):
        row = q[y]
        cuts = np.flatnonzero(row[1:] != row[:-1]) + 1
        starts = np.concatenate(([0], cuts))
        ends = np.concatenate((cuts, [w]))
        values = row[starts].tolist()
        first = len(parent)
        ids = list(range(first, first + len(starts)))
        parent.extend(ids)
        s_list, e_list = starts.tolist(), ends.tolist()
        if prev is not None:
            ps, pe, pv, pids = prev
            i = j = 0
            while i < len(s_list) and j < len(ps):
                if s_list[i] < pe[j] and ps[j] < e_list[i] and values[i] == pv[j]:
                    a, b = _find(parent, ids[i]), _find(parent, pids[j])
                    if a != b:
                        parent[max(a, b)] = min(a, b)
                if e_list[i] <= pe[j]:
                    i += 1
                else:
                    j += 1
        prev = (s_list, e_list, values, ids)
        row_runs.append((ends - starts, ids))
    roots = [_find(parent, i) for i in range(len(parent))]
    compact: dict[int, int] = {}
    run_labels = np.array([compact.setdefault(r, len(compact)) for r in roots], dtype=np.int32)
    flat = np.concatenate([np.repeat(run_labels[ids[0]:ids[-1] + 1], lengths) for lengths, ids in row_runs])
    return flat.reshape(h, w), len(compact)


def _position(cx: float, cy: float) -> str:
    col = "left" if cx < 0.36 else "right" if cx > 0.64 else ""
    row = "top" if cy < 0.36 else "bottom" if cy > 0.64 else ""
    return f"{row} {col}".strip() or "centre"


def decompose_layers(image: Image.Image, max_layers: int = 16) -> list[Layer]:
    """Split ``image`` into at most ``max_layers`` layers (the base layer included).

    Layer 0 is the whole image (RGB, bbox = full frame). The others are the largest connected
    colour regions, ordered by size so backgrounds sit below the objects on them (z_index 1 is
    the largest region). Each is an RGBA crop of the original pixels whose alpha is the region
    mask, named after its colour and position ("Red region (top left)").
    """
    if max_layers < 1:
        raise ValueError("max_layers must be at least 1")
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        rgb = Image.alpha_composite(Image.new("RGBA", rgba.size, (255, 255, 255, 255)), rgba).convert("RGB")
    else:
        rgb = image.convert("RGB")
    W, H = rgb.size
    layers = [Layer(rgb.copy(), 0, "Base image", "The complete original image.", (0, 0, W, H), (0, 0, 1000, 1000))]
    if max_layers == 1:
        return layers

    s = min(1.0, ANALYSIS_MAX_SIDE / max(W, H))
    sw, sh = max(1, round(W * s)), max(1, round(H * s))
    small = rgb if (sw, sh) == (W, H) else rgb.resize((sw, sh), Image.Resampling.BOX)
    quant = small.quantize(colors=PALETTE_COLOURS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    quant = quant.filter(ImageFilter.ModeFilter(3))  # removes speckle that would split regions
    labels, count = label_regions(np.asarray(quant))

    areas = np.bincount(labels.ravel(), minlength=count)
    min_area = max(4, int(MIN_REGION_FRACTION * sw * sh))
    order = [int(i) for i in np.argsort(-areas, kind="stable") if areas[i] >= min_area][: max_layers - 1]
    used_names: dict[str, int] = {}
    for rank, lab in enumerate(order):
        region = labels == lab
        ys = np.flatnonzero(region.any(axis=1))
        xs = np.flatnonzero(region.any(axis=0))
        # Small-image box with a one-pixel margin, mapped to full resolution.
        bx1, by1 = max(0, int(xs[0]) - 1), max(0, int(ys[0]) - 1)
        bx2, by2 = min(sw, int(xs[-1]) + 2), min(sh, int(ys[-1]) + 2)
        fx1, fy1 = int(bx1 * W / sw), int(by1 * H / sh)
        fx2, fy2 = min(W, -(-bx2 * W // sw)), min(H, -(-by2 * H // sh))
        mask_small = Image.fromarray(region.astype(np.uint8) * 255, "L")
        box = (fx1 * sw / W, fy1 * sh / H, fx2 * sw / W, fy2 * sh / H)
        mask = mask_small.resize((fx2 - fx1, fy2 - fy1), Image.Resampling.BILINEAR, box=box)
        mask = mask.point(lambda v: 255 if v >= 128 else 0)
        inner = mask.getbbox()
        if inner is None:
            continue
        bbox = (fx1 + inner[0], fy1 + inner[1], fx1 + inner[2], fy1 + inner[3])
        mask = mask.crop(inner)
        crop = rgb.crop(bbox)
        mean = tuple(round(c) for c in ImageStat.Stat(crop, mask).mean[:3])
        colour = colour_name(mean)  # type: ignore[arg-type]
        share = float(areas[lab]) / (sw * sh)
        full_frame = bbox[2] - bbox[0] >= 0.9 * W and bbox[3] - bbox[1] >= 0.9 * H
        where = "full frame" if full_frame else _position((bbox[0] + bbox[2]) / 2 / W, (bbox[1] + bbox[3]) / 2 / H)
        name = f"{colour} background" if full_frame and rank == 0 else f"{colour} region ({where})"
        used_names[name] = used_names.get(name, 0) + 1
        if used_names[name] > 1:
            name = f"{name} {used_names[name]}"
        description = (f"{colour} area in the {where} of the image, about {max(1, round(share * 100))}% of it; "
                       f"average colour #{mean[0]:02x}{mean[1]:02x}{mean[2]:02x}.")
        layer_img = crop.convert("RGBA")
        layer_img.putalpha(mask)
        layers.append(Layer(layer_img, len(layers), name, description, bbox, _normalize(bbox, W, H)))
    return layers
