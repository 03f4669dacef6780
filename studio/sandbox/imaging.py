"""Offline image model: real, deterministic pictures made with Pillow.

On an install without vendor keys the gateway answers image requests from this module, so
its output is what users see first. Pictures therefore have to look intentional and be
visibly derived from the prompt and from any input images, and the same request must always
give the same pixels so responses are reproducible and cacheable. Everything here is a pure
function over PIL images; no Django, no network.

This module is the public surface. Prompt reading and palettes live in ``palette``, painting in
``scene``, text in ``captions``, instruction edits in ``edits`` and segmentation in ``layers``.
"""

from __future__ import annotations

import hashlib
import io
import math
import random

import numpy as np
from PIL import Image, ImageChops, ImageDraw, ImageEnhance, ImageFilter, ImageOps, ImageStat, PngImagePlugin

from studio.sandbox import regions, scene
from studio.sandbox.captions import draw_caption, draw_label
from studio.sandbox.edits import apply_edit, is_upscale
from studio.sandbox.layers import Layer, decompose_layers
from studio.sandbox.palette import dominant_colour

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
    hint = dominant_colour(reference) if reference is not None else None
    ref = scene.cover(scene.to_rgb(reference), (width, height)) if reference is not None else None
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


def render_edit(base: Image.Image, instruction: str, seed: int | None = None,
                size: tuple[int, int] | None = None) -> Image.Image:
    """Edit ``base`` according to words in ``instruction``; the result stays visibly the same picture.

    Recognised words become operations applied in the order they appear: colour words tint,
    "warm"/"cool", "black and white", "sepia", "vintage", "brighter"/"darker", "blur",
    "sharpen", "mirror"/"flip", "rotate [N]", "invert", "poster", "pixelate", "sketch",
    "vignette" and more. Nouns such as "sun", "star", "cat" or "heart" are drawn onto the
    picture (a colour word right before one colours it). With nothing recognised a gentle
    stylisation is applied. A small label with the instruction goes in the top-left corner.
    When it names a region ("remove the cat", "make the sky pink") only that region changes.
    Output is RGB at ``size`` (centre-cropped to fit) or the base's size, with its regions noted.
    """
    img = scene.to_rgb(base)
    known = regions.noted(base)
    if size is not None and tuple(size) != img.size:
        _check_size(*size)
        if known is not None:
            known = regions.after_cover(known, img.size, (size[0], size[1]))
        img = scene.cover(img, (size[0], size[1]))
    text = " ".join(instruction.split())
    img, known = apply_edit(img, text, random.Random(seed_from("edit", text, seed)), known)
    if not is_upscale(text):  # an upscale returns the same picture, larger, with nothing drawn on it
        draw_label(img, f"Edit: {text}" if text else "Edit", "top-left")
    img.info.pop(regions.SCENE_KEY, None)
    return regions.attach(img, known) if known is not None else img


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
        src = tile if tile.mode in ("RGB", "RGBA") else tile.convert("RGBA")
        scale = min(cw * 0.8 / src.width, ch * 0.8 / src.height)
        # Resize before converting to RGBA: a quarter less data through the expensive filter.
        src = src.resize((max(1, round(src.width * scale)), max(1, round(src.height * scale))),
                         Image.Resampling.LANCZOS, reducing_gap=3.0).convert("RGBA")
        border = max(2, round(min(src.size) * 0.045))
        framed = Image.new("RGBA", (src.width + 2 * border, src.height + 2 * border), (250, 249, 244, 255))
        framed.alpha_composite(src, (border, border))
        angle = rng.uniform(-7, 7)
        framed = framed.rotate(angle, Image.Resampling.BILINEAR, expand=True)  # small angles: bilinear is enough
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
        canvas = scene.cover(scene.to_rgb(images[0]), (width, height))
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
        fill = scene.cover(scene.to_rgb(background), (cw, ch))
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
    small = np.asarray(scene.to_rgb(crop).resize((sx1 - sx0, sy1 - sy0), Image.Resampling.BOX))
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
    w, h = rgb.size
    corners = [rgb.getpixel((x, y)) for y in (0, h - 1) for x in (0, w - 1)]
    key = max(corners, key=corners.count)  # ties resolve to the first corner, deterministically
    # Largest per-channel distance to the key colour, computed with C-level Pillow ops (fast at 4K).
    r, g, b = ImageChops.difference(rgb, Image.new("RGB", rgb.size, key)).split()
    dist = ImageChops.lighter(ImageChops.lighter(r, g), b)
    tol = 24
    alpha = dist.point([max(0, min(255, round((v - tol) * 255 / tol))) for v in range(256)])
    out = rgb.convert("RGBA")
    out.putalpha(alpha)
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
    img = _with_transparency(image) if transparent else (image if image.mode in ("RGB", "L") else scene.to_rgb(image))
    buf = io.BytesIO()
    if f == "png":
        notes = image.info.get(regions.SCENE_KEY)
        info = None
        if isinstance(notes, str):  # the picture's named regions travel with it, for the next edit
            info = PngImagePlugin.PngInfo()
            info.add_text(regions.SCENE_KEY, notes)
        img.save(buf, "PNG", compress_level=6, pnginfo=info)
    elif f == "jpeg":
        img.convert("RGB").save(buf, "JPEG", quality=90 if quality is None else quality)
    else:
        img.save(buf, "WEBP", quality=90 if quality is None else quality)
    return buf.getvalue()
