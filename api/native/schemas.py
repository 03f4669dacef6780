"""Request body of ``generateContent`` / ``streamGenerateContent`` (spec/images.md, "Native")."""

from __future__ import annotations

from typing import Any

from ninja import Schema
from pydantic import ConfigDict, Field


class Open(Schema):
    """Fields not listed here are forwarded unchanged."""

    model_config = ConfigDict(extra="allow")


class InlineData(Open):
    mimeType: str = Field(description="image/png, image/jpeg or image/webp; must match the decoded bytes")
    data: str = Field(description="Base64, without a data: URI prefix")


class FileData(Open):
    mimeType: str | None = None
    fileUri: str


class Part(Open):
    text: str | None = None
    inlineData: InlineData | None = None
    fileData: FileData | None = None
    thought: bool | None = None
    thoughtSignature: str | None = Field(None, description="Replay it unchanged in later turns")


class Content(Open):
    role: str | None = Field(None, description="user or model")
    parts: list[Part]


class ImageConfig(Open):
    aspectRatio: str | None = Field(None, description="e.g. 1:1, 16:9; allowed values depend on the model")
    imageSize: str | None = Field(None, description="Output tier such as 1K, 2K, 4K")


class GenerationConfig(Open):
    responseModalities: list[str] | None = Field(None, description="[TEXT, IMAGE] for image output")
    imageConfig: ImageConfig | None = None
    temperature: float | None = None
    topP: float | None = None
    candidateCount: int | None = None
    seed: int | None = None


class GenerateContentRequest(Open):
    contents: list[Content] = Field(min_length=1)
    systemInstruction: Content | None = None
    generationConfig: GenerationConfig | None = None
    safetySettings: list[dict[str, Any]] | None = None
    tools: list[dict[str, Any]] | None = None


class CountTokensRequest(Open):
    contents: list[Content] | None = Field(None, description="The contents to count")
    generateContentRequest: GenerateContentRequest | None = Field(None, description="A whole request to count")


class EmbedContentRequest(Open):
    model: str | None = Field(None, description="models/{model}, the model of the path, when given")
    content: Content
    taskType: str | None = Field(None, description="e.g. RETRIEVAL_QUERY, RETRIEVAL_DOCUMENT, SEMANTIC_SIMILARITY")
    title: str | None = None
    outputDimensionality: int | None = Field(None, description="Fewer dimensions than the model's full size")


class BatchEmbedContentsRequest(Open):
    requests: list[EmbedContentRequest] = Field(min_length=1)
