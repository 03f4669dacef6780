"""Mask encoding: the painted layer becomes the vendor's mask (alpha 0 = edit), outpaint canvases."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image, ImageDraw

from studio.core.errors import BadRequest
from studio.gateway.images import masks


def layer_uri(size, box) -> str:
    layer = Image.new("RGBA", size, (0, 0, 0, 0))
    ImageDraw.Draw(layer).rectangle(box, fill=(255, 45, 120, 255))
    return "data:image/png;base64," + base64.b64encode(masks.png_bytes(layer)).decode()


def alpha_of(png: bytes) -> Image.Image:
    with Image.open(io.BytesIO(png)) as picture:
        assert picture.format == "PNG"
        return picture.convert("RGBA").getchannel("A")


def test_painted_area_becomes_transparent_and_the_rest_opaque():
    painted = masks.painted_layer(layer_uri((64, 48), (10, 10, 29, 19)), (64, 48))
    alpha = alpha_of(masks.vendor_mask(painted))
    assert alpha.size == (64, 48)
    assert alpha.getpixel((15, 15)) == 0  # painted: the model may change it
    assert alpha.getpixel((0, 0)) == 255 and alpha.getpixel((40, 30)) == 255
    assert masks.edit_area(masks.vendor_mask(painted)).getbbox() == (10, 10, 30, 20)


def test_invert_opens_everything_but_the_painted_area():
    painted = masks.painted_layer(layer_uri((64, 48), (10, 10, 29, 19)), (64, 48))
    alpha = alpha_of(masks.vendor_mask(painted, invert=True))
    assert alpha.getpixel((15, 15)) == 255
    assert alpha.getpixel((0, 0)) == 0


def test_a_layer_drawn_at_another_resolution_is_scaled_to_the_image():
    painted = masks.painted_layer(layer_uri((32, 24), (0, 0, 15, 23)), (64, 48))
    assert painted.size == (64, 48)
    assert painted.getpixel((10, 10)) == 255 and painted.getpixel((50, 10)) == 0


def test_a_mask_that_changes_nothing_is_refused():
    with pytest.raises(BadRequest) as error:
        masks.vendor_mask(Image.new("L", (64, 48), 0))  # nothing painted
    assert error.value.param == "mask"
    with pytest.raises(BadRequest):
        masks.vendor_mask(Image.new("L", (64, 48), 255), invert=True)  # everything painted, then inverted


def test_the_layer_must_be_a_png_data_uri():
    jpeg = io.BytesIO()
    Image.new("RGB", (8, 8)).save(jpeg, format="JPEG")
    with pytest.raises(BadRequest) as error:
        masks.painted_layer("data:image/jpeg;base64," + base64.b64encode(jpeg.getvalue()).decode(), (8, 8))
    assert error.value.param == "mask"
    with pytest.raises(BadRequest):
        masks.painted_layer("", (8, 8))


def test_outpaint_keeps_the_source_exactly_and_opens_only_the_new_area():
    source = Image.new("RGB", (40, 30), (200, 10, 10))
    ImageDraw.Draw(source).line((0, 0, 39, 29), fill=(0, 255, 0))
    frame = masks.OutpaintFrame.around(source.size, left=10, top=5, right=30, bottom=0)
    assert (frame.width, frame.height, frame.x, frame.y) == (80, 35, 10, 5)
    prepared = masks.outpaint(source, frame, (0, 0, 255))
    with Image.open(io.BytesIO(prepared.canvas_png)) as canvas:
        canvas = canvas.convert("RGB")
        assert canvas.size == (80, 35)
        assert canvas.crop((10, 5, 50, 35)).tobytes() == source.tobytes()
        assert canvas.getpixel((0, 0)) == (0, 0, 255)
    alpha = alpha_of(prepared.mask_png)
    assert alpha.getpixel((12, 7)) == 255 and alpha.getpixel((49, 34)) == 255
    assert alpha.getpixel((9, 5)) == 0 and alpha.getpixel((50, 5)) == 0 and alpha.getpixel((20, 4)) == 0
    with Image.open(io.BytesIO(prepared.backdrop_png)) as backdrop:
        assert backdrop.size == (80, 35)


def test_outpaint_from_the_prompt_leaves_the_new_area_transparent_and_sends_no_backdrop():
    source = Image.new("RGB", (20, 20), (9, 9, 9))
    prepared = masks.outpaint(source, masks.OutpaintFrame.around(source.size, 4, 4, 4, 4), None)
    assert prepared.backdrop_png is None
    with Image.open(io.BytesIO(prepared.canvas_png)) as canvas:
        assert canvas.mode == "RGBA" and canvas.getpixel((0, 0))[3] == 0 and canvas.getpixel((10, 10)) == (9, 9, 9, 255)


def test_outpaint_with_a_picture_covers_the_canvas():
    picture = Image.new("RGB", (10, 100), (0, 200, 0))
    prepared = masks.outpaint(Image.new("RGB", (20, 20)), masks.OutpaintFrame.around((20, 20), 40, 0, 40, 0), picture)
    with Image.open(io.BytesIO(prepared.backdrop_png)) as backdrop:
        assert backdrop.size == (100, 20) and backdrop.getpixel((0, 0)) == (0, 200, 0)


@pytest.mark.parametrize("margins, param", [
    ((0, 0, 0, 0), "frame"), ((-4, 0, 0, 0), "frame.left"), ((0, 5000, 0, 0), "frame"), ((0, 0, 1.5, 0), "frame.right"),
])
def test_bad_frames_are_refused_naming_the_field(margins, param):
    with pytest.raises(BadRequest) as error:
        masks.OutpaintFrame.around((100, 100), *margins)
    assert error.value.param == param


@pytest.mark.parametrize("raw", ["#12abEF", "12abef"])
def test_colours(raw):
    assert masks.parse_colour(raw) == (0x12, 0xAB, 0xEF)


def test_bad_colour_names_the_field():
    with pytest.raises(BadRequest) as error:
        masks.parse_colour("red")
    assert error.value.param == "background.value"
