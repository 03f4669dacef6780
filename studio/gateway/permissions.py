"""Who may see and change what. Every page, media URL and socket asks here.

A forbidden asset answers exactly like a missing one (404), so ids leak nothing.

Rules:
- an asset is seen by its owner; by every member of its team (viewers included) when it is
  team-visible (a link-shared team asset stays visible to the team); by anyone holding its share
  token while it is link-shared;
- curating (star, put in a collection) is for the owner and team members who may add (member+);
- managing (delete, move between teams) is for the owner and the team's admins;
- only the owner shares by link or revokes the link;
- a team is seen by its members; admins manage members; only the owner deletes it.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import Q, QuerySet
from django.http import Http404

from studio.models import Asset, Collection, Generation, Membership, Role, Team, Visibility

SHARED_WITH_TEAM = (Visibility.TEAM, Visibility.LINK)


def roles_of(user) -> dict[int, str]:
    """team id → the user's role there (one query)."""
    if not user.is_authenticated:
        return {}
    return dict(Membership.objects.filter(user=user).values_list("team_id", "role"))


def has_role(roles: dict[int, str], team_id: int | None, role: str) -> bool:
    if team_id is None or team_id not in roles:
        return False
    return Membership(role=roles[team_id]).has_role(role)


def membership(user, team: Team) -> Membership | None:
    if not user.is_authenticated:
        return None
    return Membership.objects.filter(team=team, user=user).first()


# --- assets -------------------------------------------------------------------------------------

def visible_assets(user, roles: dict[int, str] | None = None) -> QuerySet[Asset]:
    if not user.is_authenticated:
        return Asset.objects.none()
    teams = list(roles if roles is not None else roles_of(user))
    return Asset.objects.filter(Q(owner=user) | Q(team_id__in=teams, visibility__in=SHARED_WITH_TEAM))


def link_valid(asset: Asset, share_token: str | None) -> bool:
    return bool(
        share_token and asset.visibility == Visibility.LINK and asset.share_token
        and _same(share_token, asset.share_token)
    )


def _same(a: str, b: str) -> bool:
    import hmac

    return hmac.compare_digest(a.encode(), b.encode())


def can_view(user, asset: Asset, share_token: str | None = None, roles: dict[int, str] | None = None) -> bool:
    if link_valid(asset, share_token):
        return True
    if not user.is_authenticated:
        return False
    if asset.owner_id == user.id:
        return True
    if not asset.team_id or asset.visibility not in SHARED_WITH_TEAM:
        return False
    roles = roles if roles is not None else roles_of(user)
    return asset.team_id in roles


def can_curate(user, asset: Asset, roles: dict[int, str]) -> bool:
    if asset.owner_id == user.id:
        return True
    return asset.visibility in SHARED_WITH_TEAM and has_role(roles, asset.team_id, Role.MEMBER)


def can_manage(user, asset: Asset, roles: dict[int, str]) -> bool:
    if asset.owner_id == user.id:
        return True
    return asset.visibility in SHARED_WITH_TEAM and has_role(roles, asset.team_id, Role.ADMIN)


def can_share_link(user, asset: Asset) -> bool:
    return user.is_authenticated and asset.owner_id == user.id


def visible_asset_or_404(user, asset_id: uuid.UUID | str, roles: dict[int, str] | None = None,
                         share_token: str | None = None) -> Asset:
    asset = Asset.objects.select_related("generation").filter(id=asset_id).first()
    if asset is None or not can_view(user, asset, share_token, roles):
        raise Http404("no such asset")
    return asset


def may_add_to_team(roles: dict[int, str], team_id: int) -> bool:
    return has_role(roles, team_id, Role.MEMBER)


def usable_collections(user, roles: dict[int, str]) -> QuerySet[Collection]:
    """Collections the user may put assets in: their personal ones and their teams' (member+)."""
    adding = [team for team, role in roles.items() if Membership(role=role).has_role(Role.MEMBER)]
    return Collection.objects.filter(Q(owner=user, team__isnull=True) | Q(team_id__in=adding))


def visible_collections(user, roles: dict[int, str]) -> QuerySet[Collection]:
    return Collection.objects.filter(Q(owner=user, team__isnull=True) | Q(team_id__in=list(roles)))


# --- teams --------------------------------------------------------------------------------------

def team_or_404(user, slug: str, role: str = Role.VIEWER) -> tuple[Team, Membership]:
    """The team and the user's membership, when they hold at least ``role``; 404 otherwise
    (outsiders cannot tell a team exists), 403 for members lacking the role."""
    from django.core.exceptions import PermissionDenied

    team = Team.objects.filter(slug=slug).first()
    member = membership(user, team) if team is not None else None
    if team is None or member is None:
        raise Http404("no such team")
    if not member.has_role(role):
        raise PermissionDenied(f"this needs the {role} role in {team.name}")
    return team, member


# --- live jobs ----------------------------------------------------------------------------------

def can_see_generation(user_id: int, generation_id: str) -> list[dict[str, Any]] | None:
    """The stored events of a job the user may follow, or None (unknown and forbidden look alike).

    The job's owner always may; members of the job's team may, since its outputs are team-visible.
    """
    try:
        generation = Generation.objects.only("user_id", "team_id", "events").get(id=uuid.UUID(str(generation_id)))
    except (ValueError, Generation.DoesNotExist):
        return None
    if generation.user_id == user_id:
        return list(generation.events)
    if generation.team_id and Membership.objects.filter(team_id=generation.team_id, user_id=user_id).exists():
        return list(generation.events)
    return None
