"""Studio pages: Generate and Gallery, and the permission-checked media file view."""

from __future__ import annotations

import uuid
from datetime import datetime

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.dateparse import parse_datetime

from studio.models import Asset, ModelKind, PlatformModel

from .access import can_view, visible_assets
from .files import stream_file

PAGE_SIZE = 48


def home(request: HttpRequest) -> HttpResponse:
    return redirect("generate" if request.user.is_authenticated else "login")


@login_required
def generate(request: HttpRequest) -> HttpResponse:
    models = [
        {"id": m.model_id, "name": m.display_name or m.model_id, "capabilities": m.capabilities}
        for m in PlatformModel.objects.filter(kind=ModelKind.NATIVE_IMAGE, enabled=True).order_by("model_id")
    ]
    return render(request, "studio/generate.html", {"models": models, "initial_model": request.GET.get("model")})


@login_required
def gallery(request: HttpRequest) -> HttpResponse:
    assets = (
        visible_assets(request.user)
        .filter(is_input=False, is_draft=False)
        .select_related("generation")
        .order_by("-created", "-id")
    )
    before = parse_datetime(request.GET.get("before", "")) if request.GET.get("before") else None
    if isinstance(before, datetime):
        assets = assets.filter(created__lt=before)
    page = list(assets[: PAGE_SIZE + 1])
    next_cursor = page[PAGE_SIZE - 1].created.isoformat() if len(page) > PAGE_SIZE else None
    return render(request, "studio/gallery.html", {"assets": page[:PAGE_SIZE], "next_cursor": next_cursor})


def asset_file(request: HttpRequest, asset_id: uuid.UUID) -> HttpResponse:
    try:
        asset = Asset.objects.get(id=asset_id)
    except Asset.DoesNotExist:
        raise Http404 from None
    if not can_view(request.user, asset, request.GET.get("t")):
        raise Http404
    return stream_file(request, asset.file.storage, asset.file.name, asset.bytes, asset.mime)
