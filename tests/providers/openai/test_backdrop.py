"""An outpainting backdrop flattened into the image and mask the OpenAI images API takes."""

from __future__ import annotations

import io

from PIL import Image

from studio.core.images import SourceImage
from studio.providers.openai.backdrop import flatten


def source(size, colour, mode="RGB", name="image") -> SourceImage:
    buffer = io.BytesIO()
    Image.new(mode, size, colour).save(buffer, "PNG")
    return SourceImage(data=buffer.getvalue(), mime="image/png", width=size[0], height=size[1], field=name)


def opened(image: SourceImage) -> Image.Image:
    return Image.open(io.BytesIO(image.data))


def test_without_a_mask_the_source_is_centred_on_the_backdrop_and_only_the_seam_opens():
    image, mask = flatten(source((40, 40), (250, 0, 0)), source((200, 100), (0, 0, 250), name="background"), None)
    picture, alpha = opened(image).convert("RGB"), opened(mask).getchannel("A")
    assert picture.size == (200, 100) and picture.getpixel((100, 50)) == (250, 0, 0)
    assert picture.getpixel((1, 1)) == (0, 0, 250)
    assert alpha.getpixel((100, 50)) == 255 and alpha.getpixel((1, 1)) == 255
    assert alpha.getpixel((122, 50)) == 0  # just right of the source: blended by the vendor


def test_with_a_mask_the_area_to_fill_shows_the_backdrop():
    keep_left = Image.new("RGBA", (60, 30), (0, 0, 0, 0))
    keep_left.paste((0, 0, 0, 255), (0, 0, 30, 30))
    buffer = io.BytesIO()
    keep_left.save(buffer, "PNG")
    mask = SourceImage(data=buffer.getvalue(), mime="image/png", width=60, height=30, field="mask")
    image, sent_mask = flatten(source((60, 30), (250, 0, 0)), source((10, 10), (0, 250, 0), name="background"), mask)
    picture = opened(image).convert("RGB")
    assert picture.getpixel((5, 15)) == (250, 0, 0) and picture.getpixel((55, 15)) == (0, 250, 0)
    assert opened(sent_mask).getchannel("A").getpixel((55, 15)) == 255  # far from the seam: kept
