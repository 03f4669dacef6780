"""The images family's neutral types: one request, one result item, one stream event.

Every upstream protocol (OpenAI Images, Ark Seedream, Gemini by translation) is read into these
by its provider (``ImagesUpstream`` in ``studio.providers.contracts``), and the inbound API
renders them in the client's shape; no vendor dict travels further. They live in the core so
providers and the engine share them without providers importing the engine.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from studio.core.entries import ModelEntry
from studio.core.errors import BadRequest, UnreadableAnswer

GENERATIONS = "images.generations"
EDITS = "images.edits"
MIME_OF_FORMAT = {"png": "image/png", "jpeg": "image/jpeg", "jpg": "image/jpeg", "webp": "image/webp"}
# Longest side (pixels) up to which a WxH size maps to each size tier of a native model.
TIER_LIMITS = (("512", 768), ("1K", 1536), ("2K", 3072), ("4K", 1 << 30))
RATIO_TOLERANCE = 0.03


@dataclass(slots=True)
class SourceImage:
    """A validated input image (decoded bytes whose type was checked against the data)."""

    data: bytes = field(repr=False)
    mime: str
    width: int
    height: int
    field: str
    asset_id: uuid.UUID | None = None  # set when it came from a stored file

    def data_uri(self) -> str:
        return f"data:{self.mime};base64," + base64.b64encode(self.data).decode()

    @property
    def filename(self) -> str:
        return "image." + self.mime.split("/")[-1]


@dataclass(slots=True)
class ImageJob:
    """One images request after validation: fields to pass on, resolved input images."""

    route: str
    model: ModelEntry
    family: str  # "standard" | "layered" | "native": which shape and which rules
    fields: dict[str, Any]  # the client's fields minus image sources (unknown fields survive)
    prompt: str
    images: list[SourceImage] = field(default_factory=list)
    mask: SourceImage | None = None
    backdrop: SourceImage | None = None
    image_as_list: bool = False  # the client sent ``image`` as an array (extension family)

    @property
    def size(self) -> str:
        return str(self.fields.get("size") or "auto")

    @property
    def quality(self) -> str:
        return str(self.fields.get("quality") or "auto")

    @property
    def count(self) -> int:
        """How many images the call may make (what a reservation is made for)."""
        options = self.fields.get("sequential_image_generation_options")
        most = options.get("max_images") if isinstance(options, dict) else None
        n = self.fields.get("n")
        value = most if isinstance(most, int) else n if isinstance(n, int) else 1
        return max(min(value, 16), 1)

    @property
    def stream(self) -> bool:
        return bool(self.fields.get("stream"))

    @property
    def response_format(self) -> str:
        if self.fields.get("response_format"):
            return str(self.fields["response_format"])
        return "url" if self.family == "layered" else "b64_json"

    @property
    def partial_images(self) -> int:
        return int(self.fields.get("partial_images") or 0)


@dataclass(slots=True)
class ImageItem:
    """One result image (or one failed item of a group)."""

    b64: str | None = field(default=None, repr=False)
    data: bytes | None = field(default=None, repr=False)
    mime: str = "image/png"
    revised_prompt: str | None = None
    size: str | None = None
    output_format: str | None = None
    z_index: int | None = None
    name: str | None = None
    description: str | None = None
    bounding_box: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    asset_id: uuid.UUID = field(default_factory=uuid.uuid4)

    # Base64 characters ``head`` decodes: 48 KB of picture, where its format puts its size.
    HEAD = 64 * 1024

    def raw(self) -> bytes:
        """The picture's bytes (``UnreadableAnswer`` when the vendor's base64 is not base64)."""
        if self.data is None:
            try:
                self.data = base64.b64decode(self.b64 or "")
            except ValueError as exc:  # binascii.Error, or characters outside ASCII
                raise UnreadableAnswer("the upstream's picture is not base64") from exc
        return self.data

    def head(self) -> bytes:
        """The first bytes of the picture (its header), without decoding the whole of its base64;
        all of it when it is short or not clean base64."""
        if self.data is not None or self.b64 is None or len(self.b64) <= self.HEAD:
            return self.raw()
        try:
            return base64.b64decode(self.b64[:self.HEAD], validate=True)
        except ValueError:  # binascii.Error, or characters outside ASCII
            return self.raw()

    def b64_text(self) -> str:
        if self.b64 is None:
            self.b64 = base64.b64encode(self.data or b"").decode()
        return self.b64

    @property
    def ok(self) -> bool:
        return self.error is None and (self.b64 is not None or self.data is not None)


@dataclass(slots=True)
class ImageResult:
    items: list[ImageItem]
    created: int
    usage: dict[str, Any] | None = None
    echo: dict[str, Any] = field(default_factory=dict)  # background, output_format, quality, size
    text: str = ""


@dataclass(slots=True)
class ImageEvent:
    """``partial``: a preview of image ``index``; ``item``: a finished (or failed) image;
    ``completed``: the end, with usage (and, once the gateway has priced it, the call's cost in
    US dollars)."""

    kind: str
    index: int = 0
    item: ImageItem | None = None
    partial_index: int = 0
    usage: dict[str, Any] | None = None
    echo: dict[str, Any] = field(default_factory=dict)
    cost_usd: Decimal | None = None


def item_from_vendor(entry: dict[str, Any], default_format: str = "png") -> ImageItem:
    """An item of an OpenAI or Ark ``data[]`` list (downloaded bytes under ``_bytes``)."""
    fmt = str(entry.get("output_format") or default_format)
    mime = entry.get("_mime") or MIME_OF_FORMAT.get(fmt, "image/png")
    error = entry.get("error") if isinstance(entry.get("error"), dict) else None
    return ImageItem(
        b64=entry.get("b64_json") if isinstance(entry.get("b64_json"), str) else None,
        data=entry.get("_bytes"), mime=str(mime), revised_prompt=entry.get("revised_prompt"),
        size=entry.get("size"), output_format=entry.get("output_format"), z_index=entry.get("z_index"),
        name=entry.get("name"), description=entry.get("description"),
        bounding_box=entry.get("bounding_box") if isinstance(entry.get("bounding_box"), dict) else None,
        error={k: str(v) for k, v in error.items() if v is not None} if error else None,
    )


@dataclass(frozen=True, slots=True)
class TierSize:
    """A standard ``size`` read against a native model's tiers and aspect ratios."""

    aspect_ratio: str | None = None  # None: the model's default
    tier: str | None = None


def tier_size(size: str | None, model: ModelEntry) -> TierSize:
    """``auto``, a tier the model has, or WxH near one of its ratios; a 400 naming ``size`` otherwise."""
    caps = model.capabilities
    tiers, ratios = caps.get("image_sizes") or ["1K"], caps.get("aspect_ratios") or ["1:1"]
    if size in (None, "", "auto"):
        return TierSize()
    if size in tiers:
        return TierSize(tier=size)
    width, _, height = size.partition("x")
    if not (width.isdigit() and height.isdigit() and int(width) > 0 and int(height) > 0):
        raise BadRequest(f"invalid 'size': {size!r}; use 'auto', a tier ({', '.join(tiers)}) or WIDTHxHEIGHT",
                         param="size", code="invalid_value")
    target = int(width) / int(height)

    def ratio_value(ratio: str) -> float:
        a, _, b = ratio.partition(":")
        return int(a) / int(b)

    ratio = min(ratios, key=lambda r: abs(ratio_value(r) - target))
    if abs(ratio_value(ratio) - target) / target > RATIO_TOLERANCE:
        raise BadRequest(f"invalid 'size': {size} has an aspect ratio model '{model.model_id}' cannot make; "
                         f"supported ratios: {', '.join(ratios)}", param="size", code="invalid_value")
    longest = max(int(width), int(height))
    tier = next(name for name, limit in TIER_LIMITS if longest <= limit)
    if tier not in tiers:
        raise BadRequest(f"invalid 'size': {size} needs the {tier} tier, which model '{model.model_id}' does not "
                         f"offer (tiers: {', '.join(tiers)})", param="size", code="invalid_value")
    return TierSize(aspect_ratio=ratio, tier=tier)
