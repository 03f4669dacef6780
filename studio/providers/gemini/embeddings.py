"""``models/{m}:batchEmbedContents`` on the Gemini protocol (``EmbeddingsUpstream`` of ``GeminiProvider``).

One call for any number of texts (a single ``:embedContent`` is a batch of one). The vendor
reports no token usage for embeddings unless it sends ``usageMetadata``; otherwise the count is
estimated.
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


def batch_body(job: EmbeddingJob, upstream_model: str) -> dict[str, Any]:
    requests = []
    for text in job.texts():  # the engine sends token ids only to protocols that take them
        request: dict[str, Any] = {"model": f"models/{upstream_model}", "content": {"parts": [{"text": text}]}}
        if job.task_type:
            request["taskType"] = job.task_type
        if job.title:
            request["title"] = job.title
        if job.dimensions is not None:
            request["outputDimensionality"] = job.dimensions
        requests.append(request)
    return {"requests": requests}


class GeminiEmbeddingsMixin(_Base):
    async def embed(self, job: EmbeddingJob, upstream_model: str) -> EmbeddingResult:
        path = f"/models/{upstream_model}:batchEmbedContents"
        response = await self.request("POST", path, json=batch_body(job, upstream_model))
        answer = json_body(response.content)
        embeddings = answer.get("embeddings")
        if not isinstance(embeddings, list) or len(embeddings) != len(job.inputs):
            raise UpstreamError(f"upstream '{self.upstream.name}' answered without one embedding per input")
        vectors = [item.get("values") if isinstance(item, dict) else None for item in embeddings]
        if not all(isinstance(v, list) for v in vectors):
            raise UpstreamError(f"upstream '{self.upstream.name}' answered with an embedding without values")
        metadata = answer.get("usageMetadata") if isinstance(answer.get("usageMetadata"), dict) else {}
        tokens = metadata.get("promptTokenCount")
        return EmbeddingResult(vectors=[[float(x) for x in v] for v in vectors],
                               input_tokens=int(tokens) if isinstance(tokens, int) else estimate_tokens(job.inputs))
