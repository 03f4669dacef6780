"""Who may see and change what: assets, collections, teams and live jobs."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import Http404

from studio.gateway import permissions as perms
from studio.models import Asset, Collection, Generation, Visibility

pytestmark = pytest.mark.django_db


def asset(owner, team=None, visibility=Visibility.PRIVATE, share_token="") -> Asset:
    return Asset.objects.create(file="a.png", mime="image/png", owner=owner, team=team, visibility=visibility,
                                share_token=share_token)


def test_roles_of_and_has_role(crew):
    roles = perms.roles_of(crew.member)
    assert roles == {crew.team.id: "member"}
    assert perms.has_role(roles, crew.team.id, "viewer") and perms.has_role(roles, crew.team.id, "member")
    assert not perms.has_role(roles, crew.team.id, "admin")
    assert not perms.has_role(roles, None, "viewer") and not perms.has_role(roles, 999, "viewer")
    assert perms.roles_of(AnonymousUser()) == {}


def test_private_assets_are_the_owners_alone(crew):
    mine = asset(crew.member, team=crew.team)  # made with a team key but kept private
    assert perms.can_view(crew.member, mine)
    for other in (crew.owner, crew.admin, crew.viewer, crew.outsider):
        assert not perms.can_view(other, mine)
    assert not perms.can_view(AnonymousUser(), mine)
    with pytest.raises(Http404):
        perms.visible_asset_or_404(crew.owner, mine.id)


def test_team_assets_are_seen_by_every_member_and_curated_by_members_up(crew):
    shared = asset(crew.member, team=crew.team, visibility=Visibility.TEAM)
    for user in (crew.owner, crew.admin, crew.member, crew.viewer):
        assert perms.can_view(user, shared)
    assert not perms.can_view(crew.outsider, shared)
    assert perms.can_curate(crew.admin, shared, perms.roles_of(crew.admin))
    assert not perms.can_curate(crew.viewer, shared, perms.roles_of(crew.viewer))
    assert perms.can_manage(crew.admin, shared, perms.roles_of(crew.admin))
    assert not perms.can_manage(crew.viewer, shared, perms.roles_of(crew.viewer))
    other_member = crew.owner
    assert perms.can_manage(other_member, shared, perms.roles_of(other_member))  # the team's owner outranks admin
    assert set(perms.visible_assets(crew.viewer)) == {shared}


def test_link_sharing(crew):
    linked = asset(crew.member, visibility=Visibility.LINK, share_token="tok-123")
    assert perms.can_view(AnonymousUser(), linked, share_token="tok-123")
    assert perms.can_view(crew.outsider, linked, share_token="tok-123")
    assert not perms.can_view(crew.outsider, linked, share_token="tok-124")
    assert not perms.can_view(crew.outsider, linked)
    assert perms.visible_asset_or_404(AnonymousUser(), linked.id, share_token="tok-123") == linked
    private_with_token = asset(crew.member, share_token="tok-9")  # link revoked: visibility no longer LINK
    assert not perms.link_valid(private_with_token, "tok-9")
    assert perms.can_share_link(crew.member, linked) and not perms.can_share_link(crew.admin, linked)
    # A link-shared team asset stays visible to its team.
    team_linked = asset(crew.member, team=crew.team, visibility=Visibility.LINK, share_token="t2")
    assert perms.can_view(crew.viewer, team_linked)


def test_collections(crew):
    personal = Collection.objects.create(name="Mine", owner=crew.viewer)
    team_col = Collection.objects.create(name="Team", owner=crew.owner, team=crew.team)
    others = Collection.objects.create(name="Theirs", owner=crew.member)
    assert set(perms.usable_collections(crew.viewer, perms.roles_of(crew.viewer))) == {personal}
    assert set(perms.visible_collections(crew.viewer, perms.roles_of(crew.viewer))) == {personal, team_col}
    assert set(perms.usable_collections(crew.member, perms.roles_of(crew.member))) == {others, team_col}
    assert perms.may_add_to_team(perms.roles_of(crew.member), crew.team.id)
    assert not perms.may_add_to_team(perms.roles_of(crew.viewer), crew.team.id)


def test_team_or_404(crew):
    team, member = perms.team_or_404(crew.viewer, "crew")
    assert team == crew.team and member.role == "viewer"
    with pytest.raises(Http404):
        perms.team_or_404(crew.outsider, "crew")
    with pytest.raises(Http404):
        perms.team_or_404(crew.owner, "no-such-team")
    with pytest.raises(PermissionDenied):
        perms.team_or_404(crew.member, "crew", role="admin")
    perms.team_or_404(crew.admin, "crew", role="admin")


def test_can_see_generation(crew):
    events = [{"type": "job.started", "seq": 1}]
    personal = Generation.objects.create(user=crew.member, model_id="m", route="studio", events=events)
    team_job = Generation.objects.create(user=crew.member, team=crew.team, model_id="m", route="studio", events=events)
    assert perms.can_see_generation(crew.member.id, str(personal.id)) == events
    assert perms.can_see_generation(crew.viewer.id, str(personal.id)) is None
    assert perms.can_see_generation(crew.viewer.id, str(team_job.id)) == events
    assert perms.can_see_generation(crew.outsider.id, str(team_job.id)) is None
    assert perms.can_see_generation(crew.member.id, "not-a-uuid") is None
    assert perms.can_see_generation(crew.member.id, "00000000-0000-0000-0000-000000000000") is None
