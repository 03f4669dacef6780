"""Layer stacks exported as files a designer opens elsewhere: a layered PSD and a ZIP of PNGs."""

from __future__ import annotations

import io
import zipfile

import orjson
import pytest
from PIL import Image

from studio.models import Asset
from tests.web.test_layers_views import layered_generation

pytestmark = pytest.mark.django_db

BOXES = {"White background": [0, 0, 600, 400], "Red subject (top left)": [60, 80, 260, 230],
         "Title text": [100, 330, 500, 380]}


def _base(generation) -> Asset:
    return Asset.objects.get(generation=generation, metadata__z_index=0)


def test_psd_has_grouped_layers_at_their_boxes(web, alice):
    from psd_tools import PSDImage

    generation = layered_generation(alice.user, BOXES)
    web.force_login(alice.user)
    response = web.get(f"/assets/{_base(generation).id}/layers.psd")
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment;") and ".psd" in response["Content-Disposition"]
    psd = PSDImage.open(io.BytesIO(response.content))
    assert psd.size == (600, 400)
    top = [(layer.name, layer.kind) for layer in psd]
    assert top == [("Original (flat)", "pixel"), ("Background", "group"), ("Subjects", "group"), ("Text", "group")]
    assert not psd[0].visible
    subject = psd[2][0]
    assert subject.name == "Red subject (top left)" and subject.bbox == (60, 80, 260, 230)
    assert psd[3][0].name == "Title text" and psd[3][0].bbox == (100, 330, 500, 380)


def test_zip_has_pngs_and_a_manifest_of_boxes(web, alice):
    generation = layered_generation(alice.user, BOXES)
    web.force_login(alice.user)
    response = web.get(f"/assets/{_base(generation).id}/layers.zip")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    manifest = orjson.loads(archive.read("manifest.json"))
    assert manifest["width"] == 600 and manifest["height"] == 400
    groups = [(entry["group"], entry["name"]) for entry in manifest["layers"]]
    assert groups == [("background", "White background"), ("subjects", "Red subject (top left)"),
                      ("text", "Title text")]
    red = manifest["layers"][1]
    assert red["bounding_box"]["absolute"] == [60, 80, 260, 230]
    assert red["bounding_box"]["normalized"] == [100, 200, 433, 575]
    image = Image.open(io.BytesIO(archive.read(red["file"])))
    assert image.format == "PNG" and image.size == (200, 150)
    assert "00-original.png" in archive.namelist()


def test_exports_are_private(web, alice, make_account):
    bob = make_account("bob")
    generation = layered_generation(alice.user, BOXES)
    web.force_login(bob.user)
    base = _base(generation)
    assert web.get(f"/assets/{base.id}/layers.psd").status_code == 404
    assert web.get(f"/assets/{base.id}/layers.zip").status_code == 404


def test_layers_page_groups_the_stack(web, alice):
    generation = layered_generation(alice.user, BOXES)
    web.force_login(alice.user)
    html = web.get(f"/assets/{_base(generation).id}/layers").content.decode()
    order = [html.index(f'data-group="{key}"') for key in ("text", "subjects", "background", "original")]
    assert order == sorted(order)  # top of the stack first
    assert "Download PSD" in html and "layers.zip" in html
