"""Reading native (Gemini-format) answers: merge streamed chunks, find images, text and reasons.

Spec rule 4: a streamed answer is the concatenation of the same candidate's ``content.parts``
across all frames, in order; the last frame alone is not enough.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from studio.gateway.native.frames import BigString, inline_bytes


@dataclass(slots=True)
class InlineImage:
    mime: str
    data: str | BigString  # base64, possibly still inside its frame (see ``native_frames``)
    thought: bool
    part_index: int

    def decode(self) -> bytes:
        return inline_bytes(self.data)


@dataclass(slots=True)
class NativeResult:
    parts: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    model_version: str = ""
    response_id: str = ""
    prompt_feedback: dict[str, Any] | None = None

    def add(self, chunk: dict[str, Any]) -> list[dict[str, Any]]:
        """Merge one response chunk; returns the parts it added (candidate 0).

        Tolerant of odd shapes: whatever is not the expected type is skipped, because the
        client already has the vendor's answer as it was and the record must not fail on it.
        """
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

    def images(self, include_thoughts: bool = False) -> list[InlineImage]:
        found = []
        for i, part in enumerate(self.parts):
            inline = inline_data(part)
            if inline is None or (part.get("thought") and not include_thoughts):
                continue
            found.append(InlineImage(
                mime=str(inline.get("mimeType") or inline.get("mime_type") or "image/png"),
                data=inline.get("data") or "", thought=bool(part.get("thought")), part_index=i,
            ))
        return found

    def final_images(self) -> list[InlineImage]:
        """Non-thought images; if a model marked its only image as a thought, that image."""
        finals = self.images()
        if finals:
            return finals
        thoughts = self.images(include_thoughts=True)
        return thoughts[-1:]

    @property
    def block_reason(self) -> str:
        """Why no image came, in the vendor's words, or '' when one did."""
        if self.final_images():
            return ""
        if self.prompt_feedback and self.prompt_feedback.get("blockReason"):
            return str(self.prompt_feedback["blockReason"])
        return self.finish_reason or "NO_IMAGE"


def inline_data(part: dict[str, Any]) -> dict[str, Any] | None:
    inline = part.get("inlineData", part.get("inline_data"))
    return inline if isinstance(inline, dict) else None


def prompt_of(body: dict[str, Any]) -> str:
    """The instruction: the text of the last user turn."""
    for content in reversed(body.get("contents") or []):
        if isinstance(content, dict) and content.get("role", "user") == "user":
            return " ".join(
                str(p["text"]) for p in content.get("parts") or [] if isinstance(p, dict) and p.get("text")
            ).strip()
    return ""


def usage_counts(usage: dict[str, Any]) -> tuple[int, int, int]:
    prompt = int(usage.get("promptTokenCount") or 0)
    total = int(usage.get("totalTokenCount") or 0)
    return prompt, max(total - prompt, int(usage.get("candidatesTokenCount") or 0)), total
