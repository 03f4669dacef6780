"""The embeddings family's neutral types: what to embed, and the vectors that came back.

The OpenAI ``/v1/embeddings`` body and the native ``:embedContent`` / ``:batchEmbedContents``
bodies are both read into an ``EmbeddingJob``; every upstream protocol answers with an
``EmbeddingResult``, which each inbound family renders in its own shape.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class EmbeddingJob:
    inputs: tuple[str, ...]
    dimensions: int | None = None  # None: the model's full size
    task_type: str | None = None  # Gemini's ``taskType`` (RETRIEVAL_QUERY, SEMANTIC_SIMILARITY, ...)
    title: str | None = None  # Gemini's document title (RETRIEVAL_DOCUMENT)
    user: str | None = None


@dataclass(frozen=True, slots=True)
class EmbeddingResult:
    vectors: list[list[float]]
    input_tokens: int


def estimate_tokens(texts: tuple[str, ...] | list[str]) -> int:
    """About four characters a token, at least one per text (for vendors that report no usage)."""
    return sum(max(1, (len(text) + 3) // 4) for text in texts)
