"""Create bodies of the three video protocols (spec/video.md)."""

from __future__ import annotations

from typing import Any, Literal

from ninja import Schema
from pydantic import ConfigDict, Field


class Open(Schema):
    """Fields not listed here are forwarded unchanged to an upstream of the same protocol."""

    model_config = ConfigDict(extra="allow")


class ArkUrl(Open):
    url: str


class ArkContent(Open):
    type: Literal["text", "image_url", "video_url", "audio_url", "draft_task"]
    text: str | None = None
    image_url: ArkUrl | None = None
    video_url: ArkUrl | None = None
    audio_url: ArkUrl | None = None
    draft_task: dict[str, Any] | None = None
    role: str | None = Field(None, description="first_frame, last_frame, reference_image, ...")


class ArkVideoRequest(Open):
    """Protocol A (ark): ``POST /v1/alpha/video/generations``."""

    model: str
    content: list[ArkContent] = Field(min_length=1)
    callback_url: str | None = Field(None, description="Your webhook; the gateway relays signed status changes")
    return_last_frame: bool | None = None
    service_tier: Literal["default", "flex"] | None = None
    execution_expires_after: int | None = Field(None, ge=3600, le=259200)
    camera_fixed: bool | None = None
    generate_audio: bool | None = None
    safety_identifier: str | None = Field(None, max_length=64)
    resolution: str | None = Field(None, description="480p, 720p, 1080p, 4k")
    ratio: str | None = Field(None, description="16:9, 4:3, 1:1, 3:4, 9:16, 21:9, adaptive")
    duration: int | None = None
    frames: int | None = None
    seed: int | None = None
    watermark: bool | None = None
    draft: bool | None = None
    priority: int | None = Field(None, ge=0, le=9)


class DashScopeMedia(Open):
    type: str = Field(description="first_frame, last_frame, reference_image, reference_video, reference_audio, "
                                  "file, link")
    url: str


class DashScopeInput(Open):
    prompt: str | None = None
    negative_prompt: str | None = None
    audio_url: str | None = None
    media: list[DashScopeMedia] | None = None


class DashScopeParameters(Open):
    resolution: str | None = Field(None, description="e.g. 720P")
    ratio: str | None = None
    duration: int | None = None
    audio: bool | None = None
    audio_setting: str | None = None
    prompt_extend: bool | None = None
    watermark: bool | None = None
    seed: int | None = None


class DashScopeVideoRequest(Open):
    """Protocol B (dashscope): ``POST /v1/beta/video/generations``."""

    model: str
    input: DashScopeInput | None = None
    parameters: DashScopeParameters | None = None


class GenericMedia(Open):
    type: str
    url: str = Field(description="A public URL or a Base64 data URI")
    role: str | None = None


class GenericVideoRequest(Open):
    """Protocol C (generic): ``POST /v1/video/generations``, translated for whichever protocol serves the model."""

    model: str
    prompt: str | None = None
    negative_prompt: str | None = None
    medias: list[GenericMedia] | None = None
    generate_audio: bool | None = None
    callback_url: str | None = None
    duration: int | None = None
    resolution: str | None = None
    ratio: str | None = None
    watermark: bool | None = None
    seed: int | None = None
