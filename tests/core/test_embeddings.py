"""The embeddings family's neutral values."""

from __future__ import annotations

from studio.core.embeddings import EmbeddingJob, estimate_tokens


def test_token_estimate_grows_with_the_text_and_counts_every_text():
    assert estimate_tokens(["a"]) == 1
    assert estimate_tokens(["a" * 400]) == 100
    assert estimate_tokens(("one", "two")) == 2
    assert EmbeddingJob(inputs=("x",)).dimensions is None
