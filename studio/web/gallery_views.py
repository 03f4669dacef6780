"""The gallery: the user's and their teams' assets, newest first, with search, filters, star,
a detail view (prompt, parameters, usage, cost, lineage), download, delete and bulk actions."""

from __future__ import annotations

import uuid
from typing import Any

import orjson
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from studio.gateway import permissions as access
from studio.gateway import prices
from studio.models import Asset, AssetKind, Collection, Generation, PlatformModel, Team, Visibility
from studio.web.gallery_query import (
    MAX_PAGE_SIZE,
    PAGE_SIZE,
    BadFilter,
    GalleryFilters,
    gallery_assets,
    page_of,
    tile,
)

BULK_ACTIONS = ("star", "unstar", "delete", "move")
MAX_BULK = 500


def _error(message: str, param: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": {"message": message, "param": param}}, status=status)


def _json_body(request: HttpRequest) -> dict[str, Any]:
    if request.content_type == "application/json":
        try:
            body = orjson.loads(request.body or b"{}")
        except orjson.JSONDecodeError:
            raise BadFilter("body is not JSON") from None
        if not isinstance(body, dict):
            raise BadFilter("body must be a JSON object")
        return body
    return {key: request.POST.getlist(key) if key == "ids" else request.POST.get(key) for key in request.POST}


@login_required
@require_GET
def gallery(request: HttpRequest) -> HttpResponse:
    roles = access.roles_of(request.user)
    try:
        filters = GalleryFilters.from_query(request.GET)
        rows, next_cursor = page_of(gallery_assets(request.user, roles, filters), request.GET.get("cursor"))
    except BadFilter as exc:
        filters, rows, next_cursor = GalleryFilters(), [], None
        error = str(exc)
    else:
        error = ""
    tiles = [tile(asset, request.user, roles) for asset in rows]
    teams = list(Team.objects.filter(id__in=list(roles)).order_by("name"))
    return render(request, "studio/gallery.html", {
        "tiles": tiles,
        "tiles_json": orjson.dumps(tiles).decode(),
        "next_cursor": next_cursor,
        "filters": filters,
        "filter_params": orjson.dumps(filters.as_params()).decode(),
        "error": error,
        "models": list(PlatformModel.objects.order_by("model_id").values_list("model_id", flat=True)),
        "kinds": AssetKind.choices,
        "teams": teams,
        "addable_teams": [t for t in teams if access.may_add_to_team(roles, t.id)],
        "collections": list(access.visible_collections(request.user, roles).select_related("team")),
        "usable_collection_ids": set(access.usable_collections(request.user, roles).values_list("id", flat=True)),
    })


@login_required
@require_GET
def gallery_page(request: HttpRequest) -> JsonResponse:
    """The next page for infinite scroll: ``{items, next}``; the same filters as the page."""
    roles = access.roles_of(request.user)
    try:
        filters = GalleryFilters.from_query(request.GET)
        size = int(request.GET.get("limit") or PAGE_SIZE)
        if not 1 <= size <= MAX_PAGE_SIZE:
            return _error(f"limit must be between 1 and {MAX_PAGE_SIZE}", "limit")
        rows, next_cursor = page_of(gallery_assets(request.user, roles, filters), request.GET.get("cursor"), size)
    except ValueError as exc:  # BadFilter, or a limit that is not a number
        param = str(exc).split(" ", 1)[0] if isinstance(exc, BadFilter) else "limit"
        return _error(str(exc) if isinstance(exc, BadFilter) else "limit must be a number", param)
    return JsonResponse({"items": [tile(asset, request.user, roles) for asset in rows], "next": next_cursor})


def _lineage_tiles(generations: list[Generation], user, roles: dict[int, str]) -> list[dict[str, Any]]:
    """The first visible output of each related generation, as a small linked thumbnail."""
    ids = [g.id for g in generations]
    if not ids:
        return []
    outputs = (access.visible_assets(user, roles)
               .filter(generation_id__in=ids, is_input=False, is_draft=False)
               .select_related("generation").order_by("generation_id", "index"))
    first: dict[uuid.UUID, Asset] = {}
    for asset in outputs:
        first.setdefault(asset.generation_id, asset)
    return [tile(first[g.id], user, roles) for g in generations if g.id in first]


@login_required
@require_GET
def asset_detail(request: HttpRequest, asset_id: uuid.UUID) -> HttpResponse:
    roles = access.roles_of(request.user)
    asset = access.visible_asset_or_404(request.user, asset_id, roles)
    generation = asset.generation
    parent_tiles: list[dict[str, Any]] = []
    child_tiles: list[dict[str, Any]] = []
    sibling_tiles: list[dict[str, Any]] = []
    cost = None
    if generation is not None:
        if generation.parent_id:
            parent_tiles = _lineage_tiles(list(Generation.objects.filter(id=generation.parent_id)), request.user, roles)
        child_tiles = _lineage_tiles(list(generation.children.order_by("created")[:24]), request.user, roles)
        sibling_tiles = [
            tile(a, request.user, roles)
            for a in access.visible_assets(request.user, roles)
            .filter(generation=generation, is_input=False, is_draft=False).exclude(id=asset.id)
            .select_related("generation").order_by("index")[:24]
        ]
        cost = prices.cost_of_generation(generation)
    addable_teams = list(Team.objects.filter(id__in=[t for t in roles if access.may_add_to_team(roles, t)]))
    return render(request, "studio/asset_detail.html", {
        "asset": asset,
        "generation": generation,
        "parameters_json": orjson.dumps(generation.parameters if generation else {},
                                        option=orjson.OPT_INDENT_2).decode(),
        "usage_json": orjson.dumps(generation.usage if generation else {}, option=orjson.OPT_INDENT_2).decode(),
        "cost": cost,
        "parents": parent_tiles, "children": child_tiles, "siblings": sibling_tiles,
        "can_curate": access.can_curate(request.user, asset, roles),
        "can_manage": access.can_manage(request.user, asset, roles),
        "can_share": access.can_share_link(request.user, asset),
        "share_url": request.build_absolute_uri(reverse("shared-asset", args=[asset.share_token]))
        if asset.visibility == Visibility.LINK and asset.share_token else "",
        "addable_teams": addable_teams,
        "collections": list(access.usable_collections(request.user, roles).select_related("team")),
        "use_as_input_url": f"{reverse('generate')}?input={asset.id}",
    })


@login_required
@require_POST
def asset_star(request: HttpRequest, asset_id: uuid.UUID) -> JsonResponse:
    """Set (``starred=1|0``) or toggle the star."""
    roles = access.roles_of(request.user)
    asset = access.visible_asset_or_404(request.user, asset_id, roles)
    if not access.can_curate(request.user, asset, roles):
        return _error("viewers cannot star this team's assets", "asset", 403)
    wanted = request.POST.get("starred")
    asset.starred = (not asset.starred) if wanted is None else wanted in ("1", "true", "on")
    Asset.objects.filter(id=asset.id).update(starred=asset.starred)
    if not request.headers.get("Accept", "").startswith("application/json"):
        return redirect("asset-detail", asset_id=asset.id)  # the detail page's plain form
    return JsonResponse({"id": str(asset.id), "starred": asset.starred})


def delete_asset(asset: Asset) -> None:
    """Remove the row and its files (the thumbnail too)."""
    file, thumb = asset.file, asset.thumbnail
    asset.delete()
    for stored in (file, thumb):
        if stored:
            stored.storage.delete(stored.name)


@login_required
@require_POST
def asset_delete(request: HttpRequest, asset_id: uuid.UUID) -> HttpResponse:
    roles = access.roles_of(request.user)
    asset = access.visible_asset_or_404(request.user, asset_id, roles)
    if not access.can_manage(request.user, asset, roles):
        return _error("only the owner or a team admin can delete this asset", "asset", 403)
    delete_asset(asset)
    if request.headers.get("Accept", "").startswith("application/json"):
        return JsonResponse({"id": str(asset_id), "deleted": True})
    return redirect("gallery")


# --- bulk ---------------------------------------------------------------------------------------

def _move(asset: Asset, user, roles: dict[int, str], team: Team | None, collection: Collection | None,
          move_team: bool, move_collection: bool) -> bool:
    """Put the asset in a team and/or collection when the user may; False when they may not."""
    if collection is not None and collection.team_id is not None:
        team, move_team = collection.team, True  # a team collection lives in that team's gallery
    if move_team and (team.id if team else None) != (asset.team_id if asset.visibility != Visibility.PRIVATE
                                                     else None):
        if not access.can_manage(user, asset, roles):
            return False
        if team is None:
            if asset.owner_id != user.id:
                return False
            asset.team = None
            if asset.visibility == Visibility.TEAM:
                asset.visibility = Visibility.PRIVATE
        else:
            asset.team = team
            if asset.visibility == Visibility.PRIVATE:
                asset.visibility = Visibility.TEAM
        if asset.collection_id and (collection is None or not move_collection):
            asset.collection = None  # the old collection belongs to the old place
    if move_collection:
        if not access.can_curate(user, asset, roles):
            return False
        if collection is not None and collection.team_id is None and asset.owner_id != user.id:
            return False  # a personal collection holds its owner's assets only
        asset.collection = collection
    return True


@login_required
@require_POST
def gallery_bulk(request: HttpRequest) -> JsonResponse:
    """``{action: star|unstar|delete|move, ids: [...], team?: id|"", collection?: id|""}`` →
    ``{done: [...ids], skipped: [...ids]}``; assets the user may not change are skipped."""
    roles = access.roles_of(request.user)
    try:
        body = _json_body(request)
    except BadFilter as exc:
        return _error(str(exc), "body")
    action = body.get("action")
    if action not in BULK_ACTIONS:
        return _error(f"action must be one of {', '.join(BULK_ACTIONS)}", "action")
    ids = body.get("ids")
    if not isinstance(ids, list) or not ids or len(ids) > MAX_BULK:
        return _error(f"ids must be a list of 1 to {MAX_BULK} asset ids", "ids")
    try:
        wanted = {uuid.UUID(str(i)) for i in ids}
    except ValueError:
        return _error("ids must be asset ids", "ids")

    team = collection = None
    move_team = "team" in body and body.get("team") is not None
    move_collection = "collection" in body and body.get("collection") is not None
    if action == "move":
        if not move_team and not move_collection:
            return _error("move needs a team or a collection", "team")
        if move_team and str(body["team"]):
            team = Team.objects.filter(id=_id(body["team"])).first() if _id(body["team"]) else None
            if team is None or not access.may_add_to_team(roles, team.id):
                return _error("you cannot add assets to that team", "team", 403)
        if move_collection and str(body["collection"]):
            collection = (access.usable_collections(request.user, roles).select_related("team")
                          .filter(id=_id(body["collection"])).first() if _id(body["collection"]) else None)
            if collection is None:
                return _error("you cannot add assets to that collection", "collection", 403)

    assets = list(access.visible_assets(request.user, roles).filter(id__in=wanted))
    done, skipped = [], [str(i) for i in wanted - {a.id for a in assets}]
    for asset in assets:
        asset_id, ok = str(asset.id), True  # a deleted row loses its pk
        if action in ("star", "unstar"):
            ok = access.can_curate(request.user, asset, roles)
            if ok:
                asset.starred = action == "star"
                asset.save(update_fields=["starred"])
        elif action == "delete":
            ok = access.can_manage(request.user, asset, roles)
            if ok:
                delete_asset(asset)
        else:
            ok = _move(asset, request.user, roles, team, collection, move_team, move_collection)
            if ok:
                asset.save(update_fields=["team", "visibility", "collection"])
        (done if ok else skipped).append(asset_id)
    return JsonResponse({"action": action, "done": done, "skipped": skipped})


def _id(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
