"""Teams: create, add members, roles, collections, leave and delete, each right checked."""

from __future__ import annotations

import pytest

from studio.models import Collection, Membership, Team
from tests.web.library_factories import login, make_image, make_team

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def people(make_account):
    names = ("alice", "adam", "bob", "vic", "eve", "newbie")
    accounts = {n: make_account(n) for n in names}
    team = make_team(accounts["alice"].user, "Design", adam=(accounts["adam"].user, "admin"),
                     bob=(accounts["bob"].user, "member"), vic=(accounts["vic"].user, "viewer"))
    return {**accounts, "team": team}


def role_of(team, account) -> str | None:
    member = Membership.objects.filter(team=team, user=account.user).first()
    return member.role if member else None


def test_creating_a_team_makes_the_creator_its_owner(web, make_account):
    alice = make_account("alice")
    login(web, alice)
    response = web.post("/teams/", {"name": "Night Shift"})
    team = Team.objects.get(name="Night Shift")
    assert response["Location"] == f"/teams/{team.slug}/"
    assert role_of(team, alice) == "owner"
    assert "Night Shift" in web.get("/teams/").content.decode()
    web.post("/teams/", {"name": "Night Shift"})
    assert Team.objects.filter(name="Night Shift").count() == 2  # a second slug, not a crash
    assert web.post("/teams/", {"name": "  "}).status_code == 200  # re-shown with the message


def test_outsiders_get_404_for_every_team_page(web, people):
    login(web, people["eve"])
    slug = people["team"].slug
    assert web.get(f"/teams/{slug}/").status_code == 404
    assert web.post(f"/teams/{slug}/members", {"username": "eve"}).status_code == 404
    assert web.post(f"/teams/{slug}/delete", {"confirm": slug}).status_code == 404
    assert role_of(people["team"], people["eve"]) is None


def test_viewers_see_the_team_but_cannot_add(web, people):
    login(web, people["vic"])
    slug = people["team"].slug
    page = web.get(f"/teams/{slug}/").content.decode()
    assert "bob" in page and "Add a member" not in page
    assert web.post(f"/teams/{slug}/collections", {"name": "Mine"}).status_code == 403
    assert web.post(f"/teams/{slug}/members", {"username": "newbie"}).status_code == 403


def test_members_make_collections_but_do_not_manage_members(web, people):
    login(web, people["bob"])
    slug = people["team"].slug
    web.post(f"/teams/{slug}/collections", {"name": "Moodboard"})
    assert Collection.objects.filter(team=people["team"], name="Moodboard").exists()
    assert web.post(f"/teams/{slug}/members", {"username": "newbie"}).status_code == 403
    vic = Membership.objects.get(team=people["team"], user=people["vic"].user)
    assert web.post(f"/teams/{slug}/members/{vic.id}/remove").status_code == 403


def test_admins_add_members_and_change_roles_but_not_owners(web, people):
    login(web, people["adam"])
    team, slug = people["team"], people["team"].slug
    web.post(f"/teams/{slug}/members", {"username": "newbie", "role": "viewer"})
    assert role_of(team, people["newbie"]) == "viewer"
    response = web.post(f"/teams/{slug}/members", {"username": "ghost"}, follow=True)
    assert "no user called" in response.content.decode()
    assert web.post(f"/teams/{slug}/members", {"username": "eve", "role": "owner"}).status_code == 403
    vic = Membership.objects.get(team=team, user=people["vic"].user)
    web.post(f"/teams/{slug}/members/{vic.id}/role", {"role": "member"})
    assert role_of(team, people["vic"]) == "member"
    owner = Membership.objects.get(team=team, user=people["alice"].user)
    assert web.post(f"/teams/{slug}/members/{owner.id}/role", {"role": "viewer"}).status_code == 403
    assert web.post(f"/teams/{slug}/members/{owner.id}/remove").status_code == 403
    web.post(f"/teams/{slug}/members/{vic.id}/remove")
    assert role_of(team, people["vic"]) is None


def test_a_team_keeps_an_owner(web, people):
    login(web, people["alice"])
    slug = people["team"].slug
    me = Membership.objects.get(team=people["team"], user=people["alice"].user)
    web.post(f"/teams/{slug}/members/{me.id}/role", {"role": "member"})
    assert role_of(people["team"], people["alice"]) == "owner"


def test_members_can_leave(web, people):
    login(web, people["bob"])
    me = Membership.objects.get(team=people["team"], user=people["bob"].user)
    response = web.post(f"/teams/{people['team'].slug}/members/{me.id}/remove")
    assert response["Location"] == "/teams/" and role_of(people["team"], people["bob"]) is None


def test_only_the_owner_deletes_the_team_and_assets_stay_with_their_makers(web, people):
    team, slug = people["team"], people["team"].slug
    asset = make_image(people["bob"].user, "team poster", team=team)
    login(web, people["adam"])
    assert web.post(f"/teams/{slug}/delete", {"confirm": slug}).status_code == 403
    login(web, people["alice"])
    web.post(f"/teams/{slug}/delete", {"confirm": "wrong"})
    assert Team.objects.filter(id=team.id).exists()
    web.post(f"/teams/{slug}/delete", {"confirm": slug})
    assert not Team.objects.filter(id=team.id).exists()
    assert web.get(f"/assets/{asset.id}/").status_code == 404  # no team left to share it
    login(web, people["bob"])
    assert web.get(f"/assets/{asset.id}/").status_code == 200


def test_team_gallery_filter_shows_the_team_collection(web, people):
    team = people["team"]
    folder = Collection.objects.create(name="Picks", owner=people["alice"].user, team=team)
    asset = make_image(people["alice"].user, "pick one", team=team, collection=folder)
    login(web, people["vic"])
    items = web.get("/gallery/page", {"collection": folder.id}).json()["items"]
    assert [i["id"] for i in items] == [str(asset.id)]
    assert "Picks" in web.get("/gallery/").content.decode()
