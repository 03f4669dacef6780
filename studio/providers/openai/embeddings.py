"""``POST /embeddings`` on the OpenAI protocol (``EmbeddingsUpstream`` of ``OpenAIProvider``).

Vectors are always asked for as floats: the gateway encodes them for its client itself. Inputs go
as they came: texts, or arrays of token ids (the vendor takes either).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from studio.core.embeddings import EmbeddingJob, EmbeddingResult, estimate_tokens
from studio.core.errors import UpstreamError
from studio.providers.base import json_body

if TYPE_CHECKING:
    from studio.providers.base import Provider

    _Base = Provider
else:
    _Base = object


class OpenAIEmbeddingsMixin(_Base):
    async def embed(self, job: EmbeddingJob, upstream_model: str) -> EmbeddingResult:
        inputs = [item if isinstance(item, str) else list(item) for item in job.inputs]
        body: dict[str, Any] = {"model": upstream_model, "input": inputs, "encoding_format": "float"}
        if job.dimensions is not None:
            body["dimensions"] = job.dimensions
        if job.user:
            body["user"] = job.user
        response = await self.request("POST", "/embeddings", json=body)
        answer = json_body(response.content)
        data = answer.get("data")
        if not isinstance(data, list) or len(data) != len(job.inputs):
            raise UpstreamError(f"upstream '{self.upstream.name}' answered without one embedding per input")
        ordered = sorted((item for item in data if isinstance(item, dict)), key=lambda item: item.get("index", 0))
        vectors = [item.get("embedding") for item in ordered]
        if not all(isinstance(v, list) for v in vectors):
            raise UpstreamError(f"upstream '{self.upstream.name}' answered with an embedding that is not a list")
        usage = answer.get("usage") if isinstance(answer.get("usage"), dict) else {}
        tokens = usage.get("prompt_tokens")
        return EmbeddingResult(vectors=[[float(x) for x in v] for v in vectors],
                               input_tokens=int(tokens) if isinstance(tokens, int) else estimate_tokens(job.inputs))
