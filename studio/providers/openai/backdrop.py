"""Outpainting onto a chosen background, in the terms the OpenAI images API has.

OpenAI's ``background`` is only ``transparent|opaque|auto``; it takes no background picture. The
backdrop is therefore flattened into the request: the source is placed on the backdrop (where the
client's mask keeps it, or centred when there is no mask), and the mask sent opens only a band
along the seam, so the vendor blends the two while the source and the backdrop stay as they are.
"""

from __future__ import annotations

import io

from PIL import Image, ImageChops, ImageFilter, ImageOps

from studio.core.images import SourceImage

# Share of the longest side, in pixels, that the seam band covers on each side of the border.
SEAM_SHARE = 0.03
MIN_SEAM = 6


def _open(image: SourceImage) -> Image.Image:
    with Image.open(io.BytesIO(image.data)) as picture:
        picture.load()
        return picture.convert("RGBA")


def _png(picture: Image.Image, name: str) -> SourceImage:
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return SourceImage(data=buffer.getvalue(), mime="image/png", width=picture.width, height=picture.height,
                       field=name)


def _placed(source: Image.Image, canvas: tuple[int, int]) -> tuple[Image.Image, Image.Image]:
    """The source centred on a transparent canvas (shrunk to fit if needed), and where it is."""
    width, height = canvas
    if source.width > width or source.height > height:
        source = ImageOps.contain(source, (width, height))
    layer = Image.new("RGBA", canvas, (0, 0, 0, 0))
    layer.paste(source, ((width - source.width) // 2, (height - source.height) // 2))
    return layer, layer.getchannel("A")


def flatten(source: SourceImage, backdrop: SourceImage, mask: SourceImage | None) -> tuple[SourceImage, SourceImage]:
    """The image and the mask to send instead of source, mask and backdrop.

    With a mask (alpha 0 = the area to fill) the canvas is the source's size; without one it is
    the backdrop's, with the source centred on it.
    """
    picture = _open(source)
    if mask is not None:
        canvas = picture.size
        keep = _open(mask).getchannel("A").resize(canvas).point(lambda a: 255 if a else 0)
        layer = picture
    else:
        canvas = (backdrop.width, backdrop.height)
        layer, keep = _placed(picture, canvas)
        keep = keep.point(lambda a: 255 if a else 0)
    ground = ImageOps.fit(_open(backdrop), canvas)
    flat = Image.composite(layer, ground, keep)
    band = max(MIN_SEAM, round(max(canvas) * SEAM_SHARE))
    grown = keep.filter(ImageFilter.BoxBlur(band)).point(lambda a: 255 if a else 0)  # kept area, dilated
    seam = ImageChops.subtract(grown, keep)  # 255 just outside the kept area
    opened = Image.new("RGBA", canvas, (0, 0, 0, 255))
    opened.putalpha(ImageChops.invert(seam))
    return _png(flat, source.field), _png(opened, "mask")
