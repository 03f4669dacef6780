"""Edit-session pages: the list, starting a session from a gallery image or an upload, the session
page (thread, tree, compare), its tree as JSON and remembering the head.

Turns themselves run over the page's WebSocket (``studio.gateway.jobs.edit``), through the same
native engine as /v1. A session the user may not see is a 404, like a missing one.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from studio.core.errors import BadRequest, GatewayError, NotFound
from studio.gateway.images.inputs import image_from_bytes
from studio.gateway.jobs.access import team_for_saving
from studio.gateway.media.storage import store_bytes
from studio.gateway.native import edit_sessions
from studio.gateway.permissions import can_view
from studio.models import Asset, ModelKind, PlatformModel
from studio.web.generate_views import MAX_UPLOAD_BYTES, saving_teams


def edit_models() -> list[dict[str, str]]:
    """Every model that can edit a picture: the native family (in conversation) and the images
    models that take a picture to edit (turn by turn)."""
    from studio.gateway.jobs.edit import can_edit

    rows = PlatformModel.objects.filter(kind__in=(ModelKind.NATIVE_IMAGE, ModelKind.IMAGE), enabled=True)
    return [{"id": m.model_id, "name": m.display_name or m.model_id,
             "sizes": m.capabilities.get("image_sizes") or []}
            for m in sorted(rows, key=lambda m: (m.kind != ModelKind.NATIVE_IMAGE, m.model_id)) if can_edit(m)]


def _default_model(source: Asset | None, models: set[str], listed: list[dict[str, str]]) -> str:
    """"Edit from here" names no model: the image's own model when it edits, else the first one."""
    own = source.generation.model_id if source is not None and source.generation_id else ""
    return own if own in models else (listed[0]["id"] if listed else "")


def _access_or_404(user, session_id: uuid.UUID) -> edit_sessions.SessionAccess:
    try:
        return edit_sessions.session_for(user, session_id)
    except NotFound:
        raise Http404("no such edit session") from None


def _picked_asset(user, raw: str | None) -> Asset | None:
    try:
        asset_id = uuid.UUID(str(raw))
    except ValueError:
        return None
    asset = Asset.objects.filter(id=asset_id, kind="image").first()
    return asset if asset is not None and can_view(user, asset) else None


def _list_context(request: HttpRequest, error: dict[str, str] | None = None) -> dict[str, Any]:
    picked = _picked_asset(request.user, request.POST.get("asset") or request.GET.get("asset"))
    return {
        "sessions": edit_sessions.visible_sessions(request.user)[:200],
        "models": edit_models(), "teams": saving_teams(request.user),
        "picked": picked, "error": error,
        "form": {"title": request.POST.get("title", ""), "model": request.POST.get("model", "")},
    }


@login_required
def sessions(request: HttpRequest) -> HttpResponse:
    return render(request, "studio/edit_sessions.html", _list_context(request))


def _source_for(request: HttpRequest) -> Asset:
    upload = request.FILES.get("file")
    if upload is not None:
        if upload.size and upload.size > MAX_UPLOAD_BYTES:
            raise BadRequest("the image is larger than 20 MB", param="file")
        data = upload.read()
        image = image_from_bytes(data, "file")
        return store_bytes(data, image.mime, owner_id=request.user.id, is_input=True, dedupe=True,
                           metadata={"filename": (upload.name or "")[:200]})
    if request.POST.get("asset"):
        asset = _picked_asset(request.user, request.POST["asset"])
        if asset is None:
            raise BadRequest("that image is not in your gallery", param="asset")
        return asset
    raise BadRequest("choose an image from the gallery or upload one", param="file")


@login_required
@require_POST
def new_session(request: HttpRequest) -> HttpResponse:
    listed = edit_models()
    models = {m["id"] for m in listed}
    try:
        model_id = request.POST.get("model") or _default_model(
            _picked_asset(request.user, request.POST.get("asset")), models, listed)
        if model_id not in models:
            raise BadRequest("choose a model that edits images", param="model")
        team_id = team_for_saving(request.user.id, request.POST.get("team"))
        source = _source_for(request)
    except GatewayError as exc:
        error = {"message": exc.message, "param": exc.param or ""}
        return render(request, "studio/edit_sessions.html", _list_context(request, error), status=400)
    session = edit_sessions.create_session(request.user, source, model_id, team_id=team_id,
                                           title=request.POST.get("title", ""))
    return redirect("edit-session", session_id=session.id)


@login_required
def session_page(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    access = _access_or_404(request.user, session_id)
    models = edit_models()
    return render(request, "studio/edit_session.html", {
        "session": access.session, "can_edit": access.can_edit, "models": models,
        "page_state": {
            "tree": edit_sessions.tree(access.session), "can_edit": access.can_edit,
            "tree_url": reverse("edit-session-tree", args=[session_id]),
            "head_url": reverse("edit-session-head", args=[session_id]),
            "models": models,
        },
    })


@login_required
def session_tree(request: HttpRequest, session_id: uuid.UUID) -> JsonResponse:
    access = _access_or_404(request.user, session_id)
    return JsonResponse(edit_sessions.tree(access.session))


@login_required
@require_POST
def session_head(request: HttpRequest, session_id: uuid.UUID) -> JsonResponse:
    """Remember which turn the session shows; the head is shared, so team viewers cannot move it."""
    access = _access_or_404(request.user, session_id)
    if not access.can_edit:
        return JsonResponse({"error": {"message": "viewers cannot change this session", "param": "session"}},
                            status=403)
    try:
        payload = json.loads(request.body or b"{}")
    except ValueError:
        payload = None
    raw = payload.get("turn") if isinstance(payload, dict) else None
    if raw in (None, ""):
        return JsonResponse({"error": {"message": "choose a turn", "param": "turn"}}, status=400)
    try:
        turn = edit_sessions.turn_in(access.session, raw, "turn")
    except BadRequest as exc:
        return JsonResponse({"error": {"message": exc.message, "param": exc.param}}, status=400)
    edit_sessions.set_head(access.session, turn)
    return JsonResponse(edit_sessions.tree(access.session))


urlpatterns = [
    path("", sessions, name="edit-sessions"),
    path("new", new_session, name="edit-session-new"),
    path("<uuid:session_id>/", session_page, name="edit-session"),
    path("<uuid:session_id>/tree", session_tree, name="edit-session-tree"),
    path("<uuid:session_id>/head", session_head, name="edit-session-head"),
]
