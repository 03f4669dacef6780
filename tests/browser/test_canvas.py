"""The mask canvas in a real browser: paint a mask and inpaint (only the painted area changes),
outpaint onto a larger frame (the original comes back unchanged), undo/redo surviving a reload."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageChops, ImageDraw

from studio.gateway.images import masks
from tests.browser.conftest import sign_in
from tests.web.library_factories import make_image

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FINAL = ".job figure.final img"


def source_png() -> bytes:
    picture = Image.new("RGB", (320, 240), (235, 225, 200))
    draw = ImageDraw.Draw(picture)
    for x in range(0, 320, 20):
        draw.line((x, 0, x, 239), fill=(40, 90, 160), width=3)
    draw.ellipse((110, 70, 210, 170), fill=(200, 40, 40))
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()


def stored(asset_id: str) -> Image.Image:
    from studio.models import Asset

    asset = Asset.objects.get(id=asset_id)
    with asset.file.open("rb") as handle:
        return Image.open(io.BytesIO(handle.read())).convert("RGB")


def paint_stroke(page, points) -> None:
    box = page.locator("#mask").bounding_box()
    scale = box["width"] / 320
    page.mouse.move(box["x"] + points[0][0] * scale, box["y"] + points[0][1] * scale)
    page.mouse.down()
    for x, y in points[1:]:
        page.mouse.move(box["x"] + x * scale, box["y"] + y * scale, steps=6)
    page.mouse.up()


def test_inpaint_changes_only_the_painted_area(page, live_asgi, alice):
    source = make_image(alice.user, "a red ball on paper", data=source_png())
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/canvas/{source.id}/")
    page.get_by_label("Model").select_option("kappa-image-1")
    page.get_by_label("Size").fill("40")
    paint_stroke(page, [(120, 120), (200, 120)])
    # Undo and redo (twice), and the strokes survive a reload (kept in the session).
    paint_stroke(page, [(20, 20), (60, 60)])
    page.get_by_role("button", name="Undo").click()
    page.get_by_role("button", name="Undo").click()
    page.get_by_role("button", name="Redo").click()
    page.reload()
    assert page.get_by_role("button", name="Redo").is_enabled()  # the undone stroke is still there to redo
    page.get_by_label("Prompt").fill("a bright yellow sunflower")
    page.get_by_role("button", name="Send edit").click()
    final = page.locator(FINAL)
    final.wait_for(timeout=30000)
    page.locator(".job .job-state", has_text="Done").wait_for(timeout=15000)

    result = stored(final.get_attribute("data-asset"))
    original = Image.open(io.BytesIO(source_png())).convert("RGB")
    assert result.size == original.size
    mask_id = page.locator(".job").get_attribute("data-mask")
    from studio.models import Asset, Generation

    mask_asset = Asset.objects.get(id=mask_id)
    assert mask_asset.metadata["role"] == "mask" and mask_asset.is_input  # its own layer, not in the gallery
    with mask_asset.file.open("rb") as handle:
        edit = masks.edit_area(handle.read())
    keep = edit.point(lambda v: 255 if v == 0 else 0)
    outside = ImageChops.difference(Image.composite(result, original, keep), original)
    assert outside.getbbox() is None  # byte-identical outside the mask
    box = edit.getbbox()
    assert box is not None and 95 <= box[0] <= 105 and 180 <= box[2] - 1 <= 222
    inside = ImageChops.difference(result.crop((130, 110, 190, 130)), original.crop((130, 110, 190, 130)))
    assert inside.getbbox() is not None  # and changed inside
    generation = Generation.objects.get(outputs__id=final.get_attribute("data-asset"))
    assert mask_asset.metadata["generation"] == str(generation.id)  # kept with the job that used it
    assert generation.parameters["tool"]["mask"] == mask_id
    assert generation.parent_id == source.generation_id
    assert generation.parameters["tool"]["mode"] == "inpaint"


def test_outpaint_makes_a_bigger_picture_with_the_original_unchanged(page, live_asgi, alice):
    source = make_image(alice.user, "a red ball on paper", data=source_png())
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/canvas/{source.id}/")
    page.get_by_label("Model").select_option("kappa-image-1")
    page.get_by_label("Outpaint: extend the picture").check()
    page.get_by_label("Left").fill("64")
    page.get_by_label("Right").fill("96")
    # Drag the bottom edge of the frame down.
    handle = page.locator('.handle[data-side="bottom"]').bounding_box()
    page.mouse.move(handle["x"] + 20, handle["y"] + 4)
    page.mouse.down()
    page.mouse.move(handle["x"] + 20, handle["y"] + 60, steps=5)
    page.mouse.up()
    bottom = int(page.get_by_label("Bottom").input_value())
    assert bottom > 20
    page.get_by_label("Background", exact=True).select_option("colour")
    page.get_by_label("Prompt").fill("a wide sandy beach")
    page.get_by_role("button", name="Send edit").click()
    final = page.locator(FINAL)
    final.wait_for(timeout=30000)
    page.locator(".job .job-state", has_text="Done").wait_for(timeout=15000)

    result = stored(final.get_attribute("data-asset"))
    original = Image.open(io.BytesIO(source_png())).convert("RGB")
    assert result.size == (320 + 64 + 96, 240 + bottom)
    pasted = result.crop((64, 0, 64 + 320, 240))
    assert ImageChops.difference(pasted, original).getbbox() is None  # the original, pixel for pixel
    assert result.getpixel((5, 5)) != original.getpixel((0, 0)) or result.getpixel((470, 5)) != (235, 225, 200)


def test_a_model_without_masks_offers_the_whole_image_edit_with_a_note(page, live_asgi, alice):
    source = make_image(alice.user, "a red ball on paper", data=source_png())
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/canvas/{source.id}/")
    page.get_by_label("Model").select_option("delta-3.1-flash-image")
    assert page.get_by_label("Inpaint: change only the painted area").is_disabled()
    assert "takes no mask" in page.locator("#mode-note").inner_text()
    page.get_by_label("Prompt").fill("make it a watercolour")
    page.get_by_role("button", name="Send edit").click()
    page.locator(FINAL).wait_for(timeout=30000)
    page.locator(".job .job-state", has_text="Done").wait_for(timeout=15000)
