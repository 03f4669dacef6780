"""The embeddings family's neutral types: what to embed, and the vectors that came back.

The OpenAI ``/v1/embeddings`` body and the native ``:embedContent`` / ``:batchEmbedContents``
bodies are both read into an ``EmbeddingJob``; every upstream protocol answers with an
``EmbeddingResult``, which each inbound family renders in its own shape.

An input is a text or, on OpenAI's shape, a text already split into the model's token ids (what
LangChain's ``OpenAIEmbeddings`` and other clients that count tokens themselves send): only an
upstream protocol that takes token ids (``Capability.EMBEDDING_TOKENS``) may embed those.
"""

from __future__ import annotations

from dataclasses import dataclass

# A text, or the token ids of one.
EmbeddingInput = str | tuple[int, ...]


@dataclass(frozen=True, slots=True)
class EmbeddingJob:
    inputs: tuple[EmbeddingInput, ...]
    dimensions: int | None = None  # None: the model's full size
    task_type: str | None = None  # Gemini's ``taskType`` (RETRIEVAL_QUERY, SEMANTIC_SIMILARITY, ...)
    title: str | None = None  # Gemini's document title (RETRIEVAL_DOCUMENT)
    user: str | None = None

    @property
    def token_ids(self) -> bool:
        """Whether the inputs are token ids rather than texts."""
        return any(not isinstance(item, str) for item in self.inputs)

    def texts(self) -> tuple[str, ...]:
        """The inputs as texts; ``TypeError`` for a job of token ids (the engine routes such a job
        only to an upstream that takes them)."""
        texts = tuple(item for item in self.inputs if isinstance(item, str))
        if len(texts) != len(self.inputs):
            raise TypeError("this job's inputs are token ids, not texts")
        return texts


@dataclass(frozen=True, slots=True)
class EmbeddingResult:
    vectors: list[list[float]]
    input_tokens: int


def estimate_tokens(inputs: tuple[EmbeddingInput, ...] | list[EmbeddingInput]) -> int:
    """About four characters a token, at least one per text; a token array counts its ids (for
    vendors that report no usage)."""
    return sum(max(1, (len(item) + 3) // 4) if isinstance(item, str) else len(item) for item in inputs)
