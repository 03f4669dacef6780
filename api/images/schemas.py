"""Request bodies of ``/v1/images/generations``, ``/v1/images/edits`` and ``/v1/files`` (spec/images.md)."""

from __future__ import annotations

from typing import Literal

from ninja import Schema
from pydantic import ConfigDict, Field


class Open(Schema):
    model_config = ConfigDict(extra="allow")


class OptimizePromptOptions(Open):
    mode: Literal["standard", "fast"] | None = None


class SequentialOptions(Open):
    max_images: int | None = None


class ImageGenerationRequest(Open):
    """The standard fields, and the layered/sequential extension family's."""

    model: str
    prompt: str | None = Field(None, description="Required, except for a layer decomposition of `image`")
    n: int | None = None
    size: str | None = Field(None, description="e.g. 1024x1024, or a tier such as 1K, 2K (extension family)")
    quality: str | None = None
    background: Literal["transparent", "opaque", "auto"] | None = None
    output_format: Literal["png", "jpeg", "webp"] | None = None
    output_compression: int | None = None
    response_format: Literal["url", "b64_json"] | None = None
    stream: bool | None = None
    partial_images: int | None = None
    moderation: str | None = None
    style: str | None = None
    user: str | None = None
    image: str | dict[str, str] | None = Field(None, description="Extension family: reference image, URL or Base64")
    layer_decomposition: bool | None = None
    optimize_prompt_options: OptimizePromptOptions | None = None
    sequential_image_generation: Literal["auto", "disabled"] | None = None
    sequential_image_generation_options: SequentialOptions | None = None
    watermark: bool | None = None


class ImageReference(Open):
    image_url: str | None = Field(None, description="An http(s) URL or a data: URI")
    file_id: str | None = Field(None, description="An id from POST /v1/files")


class ImageEditRequest(Open):
    model: str
    prompt: str
    images: list[ImageReference] = Field(min_length=1)
    mask: ImageReference | None = Field(None, description="Transparent pixels mark the area to edit")
    background: str | None = Field(None, description="Background image for outpainting, or transparent/opaque/auto")
    input_fidelity: Literal["high", "low"] | None = None
    n: int | None = None
    size: str | None = None
    quality: str | None = None
    output_format: Literal["png", "jpeg", "webp"] | None = None
    output_compression: int | None = None
    response_format: Literal["url", "b64_json"] | None = None
    stream: bool | None = None
    partial_images: int | None = None
    user: str | None = None


class ImageEditForm(Schema):
    """The same edit as ``multipart/form-data``, as the official SDK sends it; other fields as strings."""

    model_config = ConfigDict(extra="allow")

    model: str
    prompt: str
    image: list[bytes] = Field(description="One or more files (also accepted as image[])")
    mask: bytes | None = None
    background: bytes | str | None = Field(None, description="A background file, or transparent/opaque/auto")
    n: int | None = None
    size: str | None = None
    quality: str | None = None
    output_format: str | None = None
    output_compression: int | None = None
    response_format: str | None = None
    stream: bool | None = None
    partial_images: int | None = None


class FileUploadForm(Schema):
    file: bytes = Field(description="An image (PNG, JPEG or WebP)")
    purpose: str = Field(description="for example vision or user_data")
