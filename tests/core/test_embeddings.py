"""The embeddings family's neutral values."""

from __future__ import annotations

import pytest

from studio.core.embeddings import EmbeddingJob, estimate_tokens


def test_token_estimate_grows_with_the_text_and_counts_every_text():
    assert estimate_tokens(["a"]) == 1
    assert estimate_tokens(["a" * 400]) == 100
    assert estimate_tokens(("one", "two")) == 2
    assert EmbeddingJob(inputs=("x",)).dimensions is None


def test_token_ids_count_one_token_each_and_are_not_texts():
    job = EmbeddingJob(inputs=((1, 2, 3), (4,)))
    assert estimate_tokens(job.inputs) == 4 and job.token_ids
    with pytest.raises(TypeError):
        job.texts()
    assert EmbeddingJob(inputs=("a", "b")).texts() == ("a", "b") and not EmbeddingJob(inputs=("a",)).token_ids
