"""A layer stack as files a designer opens elsewhere: a layered PSD (one pixel layer per layer,
placed at its box, in Background / Subjects / Text groups) and a ZIP of PNGs with a JSON manifest
of the boxes. Both are built from the stored layer files; nothing is re-generated.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass

import orjson
from PIL import Image

from studio.models import Asset

GROUP_ORDER = ("background", "subjects", "text")  # bottom to top
GROUP_TITLES = {"background": "Background", "subjects": "Subjects", "text": "Text"}
MAX_SIDE = 8192  # a PSD is at most 30,000 px a side; a stack past this is not a layer stack we made
_TEXT_RE = re.compile(r"\b(?:text|title|caption|heading|lettering|logo|label|words?)\b", re.I)


@dataclass(frozen=True)
class StackLayer:
    """One layer of the stack: its file, where it goes on the base and which group it is in."""

    asset: Asset
    z_index: int
    name: str
    description: str
    box: tuple[int, int, int, int]  # (x1, y1, x2, y2) on the base, x2/y2 exclusive
    group: str


def group_of(name: str, description: str, z_index: int, full_frame: bool) -> str:
    """Background, subjects or text, from what the model called the layer."""
    if _TEXT_RE.search(name) or (_TEXT_RE.search(description) and not full_frame):
        return "text"
    if "background" in name.lower() or (z_index == 1 and full_frame):
        return "background"
    return "subjects"


def ordered(layers: list[StackLayer]) -> list[StackLayer]:
    """Bottom to top: by group, then by the model's z order inside the group."""
    return sorted(layers, key=lambda layer: (GROUP_ORDER.index(layer.group), layer.z_index))


def _open(asset: Asset) -> Image.Image:
    with asset.file.open("rb") as handle:
        image = Image.open(handle)
        image.load()
    return image.convert("RGBA")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48] or "layer"


def manifest(base: Asset, layers: list[StackLayer], files: list[str], prompt: str, model: str) -> dict:
    width, height = base.width or 1, base.height or 1
    return {
        "width": width, "height": height, "model": model, "prompt": prompt,
        "layers": [{
            "file": file, "name": layer.name, "group": layer.group, "z_index": layer.z_index,
            "description": layer.description,
            "bounding_box": {"absolute": list(layer.box),
                             "normalized": [round(layer.box[0] * 1000 / width), round(layer.box[1] * 1000 / height),
                                            round(layer.box[2] * 1000 / width), round(layer.box[3] * 1000 / height)]},
        } for layer, file in zip(layers, files, strict=True)],
    }


def build_zip(base: Asset, layers: list[StackLayer], prompt: str, model: str) -> bytes:
    """``00-original.png`` (the flat picture), one PNG per layer bottom to top, ``manifest.json``."""
    stack = ordered(layers)
    files = [f"{i + 1:02d}-{layer.group}-{_slug(layer.name)}.png" for i, layer in enumerate(stack)]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, asset in [("00-original.png", base), *zip(files, [layer.asset for layer in stack], strict=True)]:
            png = io.BytesIO()
            _open(asset).save(png, "PNG")
            archive.writestr(name, png.getvalue())
        archive.writestr("manifest.json", orjson.dumps(manifest(base, stack, files, prompt, model),
                                                       option=orjson.OPT_INDENT_2))
    return out.getvalue()


def build_psd(base: Asset, layers: list[StackLayer]) -> bytes:
    """A layered PSD: the flat original hidden at the bottom, then one group per kind of layer."""
    from psd_tools import PSDImage
    from psd_tools.api.layers import Group, PixelLayer

    width, height = base.width or 1, base.height or 1
    if max(width, height) > MAX_SIDE:
        raise ValueError(f"the picture is larger than {MAX_SIDE} px a side")
    psd = PSDImage.new("RGB", (width, height))
    original = PixelLayer.frompil(_open(base), psd, "Original (flat)", 0, 0)
    original.visible = False
    psd.append(original)
    stack = ordered(layers)
    for group_name in GROUP_ORDER:
        members = [layer for layer in stack if layer.group == group_name]
        if not members:
            continue
        group = Group.new(psd, GROUP_TITLES[group_name])
        for layer in members:
            x1, y1 = layer.box[:2]
            group.append(PixelLayer.frompil(_open(layer.asset), group, layer.name[:255], y1, x1))
        if group not in psd:
            psd.append(group)
    out = io.BytesIO()
    psd.save(out)
    return out.getvalue()
