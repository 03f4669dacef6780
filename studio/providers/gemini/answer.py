"""Reading a Gemini answer (buffered, or merged from stream chunks) for the standard images API.

A streamed answer is the concatenation of candidate 0's ``content.parts`` across all chunks
(reference §1.3); usage is cumulative, so the last ``usageMetadata`` wins. Only what the images
translation needs is kept: the image parts, the visible text and why no image came.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class InlineImage:
    mime: str
    b64: str = field(repr=False)
    thought: bool = False

    def decode(self) -> bytes:
        """Standard or URL-safe alphabet, padding optional (relays differ)."""
        text = self.b64.strip()
        return base64.urlsafe_b64decode(text.replace("+", "-").replace("/", "_") + "=" * (-len(text) % 4))


def inline_image(part: dict[str, Any]) -> InlineImage | None:
    inline = part.get("inlineData", part.get("inline_data"))
    if not isinstance(inline, dict):
        return None
    return InlineImage(mime=str(inline.get("mimeType") or inline.get("mime_type") or "image/png"),
                       b64=str(inline.get("data") or ""), thought=bool(part.get("thought")))


@dataclass(slots=True)
class MergedAnswer:
    """A Gemini answer merged from its chunks (or one buffered body): candidate 0's parts in
    order, its last finish reason, the last usage (cumulative), the prompt feedback, the model
    version and the response id. The images API's ``Answer`` and the native engine's result
    read what they need from it."""

    parts: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    prompt_feedback: dict[str, Any] | None = None
    model_version: str = ""
    response_id: str = ""

    def add(self, chunk: Any) -> list[dict[str, Any]]:
        """Merge one answer chunk; returns the parts it added (candidate 0).

        Tolerant of odd shapes: whatever is not the expected type is skipped, because the
        client already has the vendor's answer as it was and reading it must not fail.
        """
        if not isinstance(chunk, dict):
            return []
        usage = chunk.get("usageMetadata")
        if isinstance(usage, dict) and usage:
            self.usage = usage  # cumulative: the last one wins
        self.model_version = str(chunk.get("modelVersion") or self.model_version)
        self.response_id = str(chunk.get("responseId") or self.response_id)
        feedback = chunk.get("promptFeedback")
        if isinstance(feedback, dict) and feedback:
            self.prompt_feedback = feedback
        added: list[dict[str, Any]] = []
        candidates = chunk.get("candidates")
        for candidate in candidates if isinstance(candidates, list) else ():
            if not isinstance(candidate, dict) or candidate.get("index", 0) != 0:
                continue
            content = candidate.get("content")
            parts = content.get("parts") if isinstance(content, dict) else None
            added = [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
            self.parts.extend(added)
            self.finish_reason = str(candidate.get("finishReason") or self.finish_reason)
        return added

    @property
    def text(self) -> str:
        """The model's visible text (thoughts excluded)."""
        return "".join(p["text"] for p in self.parts if isinstance(p.get("text"), str) and not p.get("thought"))


@dataclass(slots=True)
class Answer(MergedAnswer):
    """What the images translation reads: the final images, and why none came."""

    def final_images(self) -> list[InlineImage]:
        """Non-thought images; if a model marked its only image as a thought, that image."""
        images = [image for part in self.parts if (image := inline_image(part)) is not None]
        finals = [image for image in images if not image.thought]
        return finals or images[-1:]

    @property
    def block_reason(self) -> str:
        """Why no image came, in the vendor's words."""
        if self.prompt_feedback and self.prompt_feedback.get("blockReason"):
            return str(self.prompt_feedback["blockReason"])
        return self.finish_reason or "NO_IMAGE"
