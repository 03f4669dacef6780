"""Studio pages: home and the permission-checked media file view (Generate is in generate_views)."""

from __future__ import annotations

import uuid

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from studio.gateway import permissions as access
from studio.web.share_views import serve_asset_file


def home(request: HttpRequest) -> HttpResponse:
    return redirect("generate" if request.user.is_authenticated else "login")


def asset_file(request: HttpRequest, asset_id: uuid.UUID) -> HttpResponse:
    """The full file for who may see it (``?download=1`` saves it as an attachment)."""
    asset = access.visible_asset_or_404(request.user, asset_id, share_token=request.GET.get("t"))
    return serve_asset_file(request, asset)
