"""Reading native (Gemini-format) answers: merge streamed chunks, find images, text and reasons.

Spec rule 4: a streamed answer is the concatenation of the same candidate's ``content.parts``
across all frames, in order; the last frame alone is not enough.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from studio.gateway.native.frames import LongString, inline_bytes
from studio.gateway.token_counts import count
from studio.providers.gemini.answer import MergedAnswer

USAGE = "usageMetadata"


@dataclass(slots=True)
class InlineImage:
    mime: str
    data: str | LongString  # base64, possibly still inside its frame or its pieces (see ``frames``)
    thought: bool
    part_index: int

    def decode(self) -> bytes:
        return inline_bytes(self.data)


@dataclass(slots=True)
class NativeResult(MergedAnswer):
    """A native answer merged chunk by chunk (``MergedAnswer.add``), read for its images, kept in
    their frames until decoded."""

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
    """Prompt, output (everything past the prompt) and total tokens of a ``usageMetadata``."""
    prompt = count(usage, "promptTokenCount", USAGE)
    total = count(usage, "totalTokenCount", USAGE)
    return prompt, max(total - prompt, count(usage, "candidatesTokenCount", USAGE)), total


def cached_count(usage: dict[str, Any]) -> int:
    return count(usage, "cachedContentTokenCount", USAGE)
