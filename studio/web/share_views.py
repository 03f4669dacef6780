"""Sharing an asset: private, with a team, or with anyone who has an unguessable link.

The link carries ``secrets.token_urlsafe(32)`` (256 bits). Revoking clears the token, so the old
link, its media URL and its thumbnail answer 404 at once; sharing again makes a new token.
The public page and its media work without sign-in while the link is active.
"""

from __future__ import annotations

import secrets
import uuid

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from studio.gateway import permissions as access
from studio.models import Asset, Team, Visibility
from studio.web.files import stream_file
from studio.web.thumbnails import serve_thumbnail

SHARE_ACTIONS = ("private", "team", "link", "revoke")


def _answer(request: HttpRequest, asset: Asset, status: int = 200, error: str = "", param: str = "") -> HttpResponse:
    wants_json = request.headers.get("Accept", "").startswith("application/json")
    if error:
        if wants_json:
            return JsonResponse({"error": {"message": error, "param": param}}, status=status)
        return HttpResponse(error, status=status, content_type="text/plain; charset=utf-8")
    if wants_json:
        link = (request.build_absolute_uri(reverse("shared-asset", args=[asset.share_token]))
                if asset.visibility == Visibility.LINK else "")
        return JsonResponse({"id": str(asset.id), "visibility": asset.visibility, "team_id": asset.team_id,
                             "share_url": link})
    return redirect("asset-detail", asset_id=asset.id)


@login_required
@require_POST
def asset_share(request: HttpRequest, asset_id: uuid.UUID) -> HttpResponse:
    """``action``: ``private`` | ``team`` (with ``team``) | ``link`` | ``revoke``."""
    roles = access.roles_of(request.user)
    asset = access.visible_asset_or_404(request.user, asset_id, roles)
    action = request.POST.get("action", "")
    if action not in SHARE_ACTIONS:
        return _answer(request, asset, 400, f"action must be one of {', '.join(SHARE_ACTIONS)}", "action")

    if action in ("link", "revoke"):
        if not access.can_share_link(request.user, asset):
            return _answer(request, asset, 403, "only the owner can share or revoke a link", "action")
        if action == "link":
            if not asset.share_token:
                asset.share_token = secrets.token_urlsafe(32)
            asset.visibility = Visibility.LINK
        else:
            asset.share_token = ""
            asset.visibility = Visibility.TEAM if asset.team_id else Visibility.PRIVATE
    elif action == "team":
        team = Team.objects.filter(id=_int(request.POST.get("team"))).first()
        if team is None or not access.may_add_to_team(roles, team.id):
            return _answer(request, asset, 403, "you cannot add assets to that team", "team")
        if not access.can_manage(request.user, asset, roles):
            return _answer(request, asset, 403, "only the owner or a team admin can move this asset", "action")
        if asset.team_id != team.id:
            asset.collection = None
        asset.team = team
        asset.visibility = Visibility.TEAM
        asset.share_token = ""
    else:  # private: back to the owner alone
        if asset.owner_id != request.user.id:
            return _answer(request, asset, 403, "only the owner can make this asset private", "action")
        if asset.collection_id and asset.collection.team_id:
            asset.collection = None
        asset.visibility = Visibility.PRIVATE
        asset.share_token = ""
    asset.save(update_fields=["visibility", "share_token", "team", "collection"])
    return _answer(request, asset)


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def shared_or_404(token: str) -> Asset:
    if not token or len(token) > 64:
        raise Http404("no such link")
    asset = (Asset.objects.select_related("generation", "owner")
             .filter(share_token=token, visibility=Visibility.LINK).first())
    if asset is None:
        raise Http404("this link was revoked or never existed")
    return asset


@require_GET
def shared_asset(request: HttpRequest, token: str) -> HttpResponse:
    asset = shared_or_404(token)
    return render(request, "studio/shared_asset.html", {
        "asset": asset, "generation": asset.generation, "token": token,
        "file_url": reverse("shared-file", args=[token]),
        "download_url": reverse("shared-file", args=[token]) + "?download=1",
    })


@require_GET
def shared_file(request: HttpRequest, token: str) -> HttpResponse:
    asset = shared_or_404(token)
    return serve_asset_file(request, asset)


@require_GET
def shared_thumbnail(request: HttpRequest, token: str) -> HttpResponse:
    return serve_thumbnail(request, shared_or_404(token))


def download_name(asset: Asset) -> str:
    ext = asset.file.name.rsplit(".", 1)[-1] if "." in asset.file.name else "bin"
    return f"{asset.kind}-{asset.id.hex[:12]}.{ext}"


def serve_asset_file(request: HttpRequest, asset: Asset) -> HttpResponse:
    """The full file; ``?download=1`` asks the browser to save it (Content-Disposition attachment)."""
    response = stream_file(request, asset.file.storage, asset.file.name, asset.bytes, asset.mime,
                           filename=download_name(asset))
    if request.GET.get("download"):
        response["Content-Disposition"] = f'attachment; filename="{download_name(asset)}"'
    return response
