"""Masks and outpaint canvases for image edits, in the vendors' convention.

The studio's mask canvas paints a layer of its own: opaque where the designer painted, transparent
elsewhere. Image-edit vendors read a mask the other way round (OpenAI's rule, which the Images
spec follows): a PNG the size of the image whose alpha is 0 where the model may paint and 255 where
every pixel must stay. This module turns the painted layer into that PNG (optionally inverted),
and prepares outpainting: the source pasted unchanged at an offset on a larger canvas, the new area
filled with the chosen background, and the mask that opens exactly that new area to the model.

The painted layer is never merged into the image: the mask travels as its own file.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

from PIL import Image, ImageChops, ImageOps

from studio.core.errors import BadRequest
from studio.gateway.media.validation import decode_inline_image

MAX_CANVAS_SIDE = 4096  # the largest side any edit model in the catalog produces
MAX_CANVAS_PIXELS = 16_777_216
_COLOUR = re.compile(r"^#?([0-9a-fA-F]{6})$")


def png_bytes(picture: Image.Image) -> bytes:
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def painted_layer(data_uri: str, size: tuple[int, int], field: str = "mask") -> Image.Image:
    """The painted area of the browser's mask layer as L (255 = painted), at the image's size.

    The layer is a PNG data URI; its alpha says where the brush went. A layer drawn at another
    resolution (a zoomed canvas) is scaled to the image, since only its shape matters.
    """
    if not isinstance(data_uri, str) or not data_uri:
        raise BadRequest("paint the area to change first (the mask is empty)", param=field)
    decoded = decode_inline_image(data_uri, None, field=field, allow_data_uri=True)
    if decoded.mime != "image/png":
        raise BadRequest("the mask layer must be a PNG", param=field)
    with Image.open(io.BytesIO(decoded.data)) as layer:
        alpha = layer.convert("RGBA").getchannel("A")
    if alpha.size != size:
        alpha = alpha.resize(size, Image.Resampling.NEAREST)
    return alpha


def vendor_mask(painted: Image.Image, *, invert: bool = False) -> bytes:
    """The edit mask PNG: alpha 0 where painted (the model paints there), 255 elsewhere.

    ``invert`` swaps the two: everything but the painted area changes. Soft brush edges keep their
    partial alpha, so the change blends in instead of ending on a hard step.
    """
    edit = ImageOps.invert(painted) if invert else painted
    if edit.getbbox() is None:
        what = "everything was painted" if invert else "nothing was painted"
        raise BadRequest(f"the mask leaves nothing to change ({what})", param="mask")
    keep = ImageOps.invert(edit)
    mask = Image.new("RGBA", painted.size, (255, 255, 255, 255))
    mask.putalpha(keep)
    return png_bytes(mask)


def edit_area(mask_png: bytes) -> Image.Image:
    """The area a vendor mask lets the model change, as L (255 = may change)."""
    with Image.open(io.BytesIO(mask_png)) as mask:
        return ImageOps.invert(mask.convert("RGBA").getchannel("A"))


def parse_colour(raw: str, field: str = "background.value") -> tuple[int, int, int]:
    match = _COLOUR.match(str(raw or "").strip())
    if match is None:
        raise BadRequest("the background colour must look like #RRGGBB", param=field)
    value = match.group(1)
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


@dataclass(frozen=True, slots=True)
class OutpaintFrame:
    """The new canvas, and where the source's top-left corner sits on it."""

    width: int
    height: int
    x: int
    y: int

    @classmethod
    def around(cls, source: tuple[int, int], left: int, top: int, right: int, bottom: int) -> OutpaintFrame:
        """A frame grown by the given margins around the source (what dragging the edges does)."""
        margins = {"left": left, "top": top, "right": right, "bottom": bottom}
        for name, value in margins.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise BadRequest(f"the {name} margin must be a whole number of pixels, 0 or more",
                                 param=f"frame.{name}")
        frame = cls(width=source[0] + left + right, height=source[1] + top + bottom, x=left, y=top)
        frame.check(source)
        return frame

    def check(self, source: tuple[int, int]) -> None:
        if self.width == source[0] and self.height == source[1]:
            raise BadRequest("drag the frame larger than the image to outpaint", param="frame")
        if max(self.width, self.height) > MAX_CANVAS_SIDE or self.width * self.height > MAX_CANVAS_PIXELS:
            raise BadRequest(f"the new canvas {self.width}x{self.height} is too large (at most "
                             f"{MAX_CANVAS_SIDE} pixels a side)", param="frame")


def cover(picture: Image.Image, size: tuple[int, int]) -> Image.Image:
    """Scale and centre-crop ``picture`` so it fills ``size`` (a background image)."""
    return ImageOps.fit(picture.convert("RGB"), size, Image.Resampling.LANCZOS)


@dataclass(slots=True)
class OutpaintRequest:
    canvas_png: bytes  # the source unchanged at its offset; the new area holds the chosen background
    mask_png: bytes  # alpha 0 over the new area only
    backdrop_png: bytes | None  # the chosen background at canvas size (None: the model invents it)


def outpaint(source: Image.Image, frame: OutpaintFrame, background: tuple[int, int, int] | Image.Image | None
             ) -> OutpaintRequest:
    """Everything an outpainting edit sends: canvas, mask and (for a colour or picture) backdrop.

    The new area is masked open so the model paints it; the source's pixels are kept by the mask
    (alpha 255), so they come back exactly as they were. Without a chosen background the new area
    is left transparent and generated from the prompt.
    """
    frame.check(source.size)
    size = (frame.width, frame.height)
    if isinstance(background, tuple):
        fill: Image.Image | None = Image.new("RGB", size, background)
    elif isinstance(background, Image.Image):
        fill = cover(background, size)
    else:
        fill = None
    picture = source.convert("RGBA")
    canvas = fill.convert("RGBA") if fill is not None else Image.new("RGBA", size, (0, 0, 0, 0))
    canvas.paste(picture, (frame.x, frame.y))
    # An opaque background over an opaque source needs no alpha channel.
    canvas_out = canvas.convert("RGB") if fill is not None and "A" not in source.getbands() else canvas
    keep = Image.new("L", size, 0)
    keep.paste(255, (frame.x, frame.y, frame.x + source.width, frame.y + source.height))
    keep = ImageChops.multiply(keep, _alpha_on(source, size, frame))
    mask = Image.new("RGBA", size, (255, 255, 255, 255))
    mask.putalpha(keep)
    return OutpaintRequest(canvas_png=png_bytes(canvas_out), mask_png=png_bytes(mask),
                           backdrop_png=png_bytes(fill) if fill is not None else None)


def _alpha_on(source: Image.Image, size: tuple[int, int], frame: OutpaintFrame) -> Image.Image:
    """The source's own alpha placed on the canvas (fully opaque when it has none)."""
    alpha = Image.new("L", size, 255)
    if "A" in source.getbands():
        alpha.paste(source.getchannel("A"), (frame.x, frame.y))
    return alpha
