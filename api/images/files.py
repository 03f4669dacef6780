"""``POST /v1/files``: upload an image once and refer to it as ``file_id`` in edits."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse

from api.auth import bearer_key, principal_for
from api.body import json_response
from api.errors import OPENAI
from api.images.schemas import FileUploadForm
from api.openapi import BEARER, body_doc
from api.routing import FamilyRouter
from studio.core.errors import BadRequest
from studio.gateway.images.inputs import FILE_PREFIX, image_from_bytes
from studio.gateway.media.storage import store_bytes
from studio.gateway.text_checks import refuse_nul

router = FamilyRouter(OPENAI, security=BEARER, tags=["files"])


@router.post("/files", openapi_extra=body_doc(multipart=FileUploadForm), summary="Upload an image file")
async def upload_file(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    if not (request.content_type or "").startswith("multipart/form-data"):
        raise BadRequest("send the file as multipart/form-data with fields 'file' and 'purpose'", param="file",
                         code="invalid_content_type")
    upload = request.FILES.get("file")
    if upload is None:
        raise BadRequest("'file' is required", param="file", code="missing_required_parameter")
    purpose = request.POST.get("purpose", "").strip()
    if not purpose:
        raise BadRequest("'purpose' is required (for example 'vision' or 'user_data')", param="purpose",
                         code="missing_required_parameter")
    filename = (upload.name or "upload")[:200]
    # The row keeps the purpose in a JSON column, which cannot hold a NUL (Django's multipart parser
    # already drops a filename's unprintable characters).
    refuse_nul({"purpose": purpose})
    image = image_from_bytes(upload.read(), "file")
    # Uploads are deduplicated by content, so the id is only known once the row is looked up or written.
    asset = await sync_to_async(store_bytes)(
        image.data, image.mime, owner_id=principal.user_id, team_id=principal.team_id, is_input=True, dedupe=True,
        metadata={"filename": filename, "purpose": purpose, "source": "files"},
    )
    body = {"id": FILE_PREFIX + asset.id.hex, "object": "file", "bytes": asset.bytes,
            "created_at": int(asset.created.timestamp()), "filename": asset.metadata.get("filename", filename),
            "purpose": asset.metadata.get("purpose", purpose), "status": "processed"}
    return json_response(body)
