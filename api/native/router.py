"""The native family's router: each handler of ``api.native.routes`` with its path, documented
body and summary (the handlers themselves load neither ninja nor the Schemas)."""

from __future__ import annotations

from api.errors import NATIVE
from api.native import routes
from api.native.schemas import (
    BatchEmbedContentsRequest,
    CountTokensRequest,
    EmbedContentRequest,
    GenerateContentRequest,
)
from api.openapi import NATIVE_KEYS, body_doc
from api.routing import FamilyRouter

router = FamilyRouter(NATIVE, security=NATIVE_KEYS, tags=["native images"])

BODY_DOC = body_doc(json=GenerateContentRequest)
router.post("/models/{model}:generateContent", openapi_extra=BODY_DOC,
            summary="Generate (buffered)")(routes.generate_content)
router.post("/models/{model}:countTokens", openapi_extra=body_doc(json=CountTokensRequest),
            summary="Count the tokens of a request")(routes.count_tokens)
router.post("/models/{model}:streamGenerateContent", openapi_extra=BODY_DOC,
            summary="Generate (SSE)")(routes.stream_generate_content)
router.post("/models/{model}:embedContent", openapi_extra=body_doc(json=EmbedContentRequest),
            summary="Embed one content")(routes.embed_content)
router.post("/models/{model}:batchEmbedContents", openapi_extra=body_doc(json=BatchEmbedContentsRequest),
            summary="Embed several contents")(routes.batch_embed_contents)
