"""Who may see what. Every page, media URL and socket asks here; a forbidden asset is a 404."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from studio.models import Asset, Membership, Visibility


def team_ids(user) -> list[int]:
    return list(Membership.objects.filter(user=user).values_list("team_id", flat=True))


def visible_assets(user) -> QuerySet[Asset]:
    if not user.is_authenticated:
        return Asset.objects.none()
    teams = team_ids(user)
    return Asset.objects.filter(Q(owner=user) | Q(team_id__in=teams, visibility=Visibility.TEAM))


def can_view(user, asset: Asset, share_token: str | None = None) -> bool:
    if share_token and asset.visibility == Visibility.LINK and asset.share_token and share_token == asset.share_token:
        return True
    if not user.is_authenticated:
        return False
    if asset.owner_id == user.id:
        return True
    return bool(
        asset.team_id
        and asset.visibility == Visibility.TEAM
        and Membership.objects.filter(team_id=asset.team_id, user=user).exists()
    )
