"""The images family's router: each handler of ``api.images.routes`` with its path, documented
body and summary (the handlers themselves load neither ninja nor the Schemas)."""

from __future__ import annotations

from api.errors import OPENAI
from api.images import routes
from api.images.schemas import ImageEditForm, ImageEditRequest, ImageGenerationRequest
from api.openapi import BEARER, body_doc
from api.routing import FamilyRouter

router = FamilyRouter(OPENAI, security=BEARER, tags=["images"])
router.post("/images/generations", openapi_extra=body_doc(json=ImageGenerationRequest),
            summary="Generate images (standard or layered/sequential extension)")(routes.generations)
router.post("/images/edits", openapi_extra=body_doc(json=ImageEditRequest, multipart=ImageEditForm),
            summary="Edit images (inpainting, outpainting, references)")(routes.edits)
