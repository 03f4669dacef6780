"""The embeddings engine's checks against a model's limits (400s naming the client's field)."""

from __future__ import annotations

import pytest

from studio.core.embeddings import EmbeddingJob
from studio.core.entries import ModelEntry
from studio.core.errors import BadRequest
from studio.gateway.embeddings.engine import validate

MODEL = ModelEntry(model_id="e-1", kind="embedding", routes=frozenset({"embeddings"}), default_protocol="openai",
                   owned_by="x", created=0,
                   capabilities={"dimensions": 1536, "min_dimensions": 8, "flexible_dimensions": True, "max_inputs": 2,
                                 "input_token_limit": 4})


@pytest.mark.parametrize("job, param", [
    (EmbeddingJob(inputs=()), "input"),
    (EmbeddingJob(inputs=("a", "b", "c")), "input"),
    (EmbeddingJob(inputs=("a", "  ")), "input"),
    (EmbeddingJob(inputs=("a",), dimensions=4), "dimensions"),
    (EmbeddingJob(inputs=("a",), dimensions=2000), "dimensions"),
    (EmbeddingJob(inputs=((1, 2), ())), "input"),
    (EmbeddingJob(inputs=((1, 2, 3, 4, 5),)), "input"),
])
def test_refusals_name_the_field(job, param):
    with pytest.raises(BadRequest) as info:
        validate(job, MODEL, field="input", dimensions_field="dimensions")
    assert info.value.param == param


def test_a_fixed_size_model_refuses_dimensions_and_a_good_job_passes():
    fixed = ModelEntry(**{**{f: getattr(MODEL, f) for f in MODEL.__slots__}, "capabilities": {"dimensions": 768}})
    with pytest.raises(BadRequest):
        validate(EmbeddingJob(inputs=("a",), dimensions=256), fixed, field="content",
                 dimensions_field="outputDimensionality")
    validate(EmbeddingJob(inputs=("a", "b"), dimensions=256), MODEL, field="input", dimensions_field="dimensions")
    validate(EmbeddingJob(inputs=((1, 2, 3, 4), (5,))), MODEL, field="input", dimensions_field="dimensions")
