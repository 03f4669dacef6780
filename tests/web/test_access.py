"""Every permission rule of assets and jobs: who sees, who changes, and that forbidden is 404."""

from __future__ import annotations

import pytest

from studio.gateway import permissions as access
from studio.models import Asset, Generation, Visibility
from tests.web.library_factories import login, make_image, make_team

pytestmark = pytest.mark.django_db(transaction=True)

ASSET_URLS = ["/assets/{id}/", "/assets/{id}/file", "/assets/{id}/thumb"]


@pytest.fixture
def people(make_account):
    alice, bob, vic, eve = (make_account(n) for n in ("alice", "bob", "vic", "eve"))
    team = make_team(alice.user, "Design", bob=(bob.user, "member"), vic=(vic.user, "viewer"))
    return {"alice": alice, "bob": bob, "vic": vic, "eve": eve, "team": team}


def status(web, account, url: str) -> int:
    if account is None:
        web.logout()
    else:
        login(web, account)
    return web.get(url).status_code


@pytest.mark.parametrize("url", ASSET_URLS)
def test_private_asset_is_the_owners_alone(web, people, url):
    asset = make_image(people["alice"].user, "private sketch")
    url = url.format(id=asset.id)
    assert status(web, people["alice"], url) == 200
    for name in ("bob", "vic", "eve"):
        assert status(web, people[name], url) == 404, name


@pytest.mark.parametrize("url", ["/assets/{id}/file", "/assets/{id}/thumb"])
def test_media_urls_answer_404_without_sign_in(web, people, url):
    asset = make_image(people["alice"].user, "private sketch")
    assert status(web, None, url.format(id=asset.id)) == 404


def test_detail_page_asks_anonymous_visitors_to_sign_in(web, people):
    asset = make_image(people["alice"].user, "private sketch")
    response = web.get(f"/assets/{asset.id}/")
    assert response.status_code == 302 and "/login/" in response["Location"]


@pytest.mark.parametrize("url", ASSET_URLS)
def test_team_asset_is_seen_by_every_member_even_viewers_but_not_outsiders(web, people, url):
    asset = make_image(people["bob"].user, "team poster", team=people["team"])
    assert asset.visibility == Visibility.TEAM  # made with a team: team-visible
    url = url.format(id=asset.id)
    for name in ("alice", "bob", "vic"):
        assert status(web, people[name], url) == 200, name
    assert status(web, people["eve"], url) == 404


def test_unknown_asset_and_forbidden_asset_look_the_same(web, people):
    asset = make_image(people["alice"].user, "private sketch")
    login(web, people["eve"])
    forbidden = web.get(f"/assets/{asset.id}/")
    missing = web.get("/assets/00000000-0000-0000-0000-000000000000/")
    assert forbidden.status_code == missing.status_code == 404


def test_private_team_asset_is_hidden_from_the_team(web, people):
    asset = make_image(people["alice"].user, "alice's draft", team=people["team"], visibility=Visibility.PRIVATE)
    assert status(web, people["bob"], f"/assets/{asset.id}/file") == 404


def test_leaving_a_team_loses_its_assets(web, people):
    asset = make_image(people["alice"].user, "team poster", team=people["team"])
    assert status(web, people["bob"], f"/assets/{asset.id}/") == 200
    people["team"].memberships.filter(user=people["bob"].user).delete()
    assert status(web, people["bob"], f"/assets/{asset.id}/") == 404


def test_rights_by_role(people):
    team_asset = make_image(people["alice"].user, "team poster", team=people["team"])
    bobs_asset = make_image(people["bob"].user, "bob's team image", team=people["team"])
    rights = {}
    for name in ("alice", "bob", "vic", "eve"):
        user = people[name].user
        roles = access.roles_of(user)
        rights[name] = (access.can_view(user, team_asset, roles=roles), access.can_curate(user, team_asset, roles),
                        access.can_manage(user, team_asset, roles), access.can_manage(user, bobs_asset, roles))
    assert rights == {
        "alice": (True, True, True, True),    # owner of one, team owner (≥ admin) for the other
        "bob": (True, True, False, True),     # member: curates, manages only his own
        "vic": (True, False, False, False),   # viewer: sees only
        "eve": (False, False, False, False),  # outsider
    }


def test_only_the_owner_shares_by_link_and_only_members_share_to_a_team(web, people):
    asset = make_image(people["bob"].user, "bob's team image", team=people["team"])
    login(web, people["alice"])  # the team's owner, not the asset's
    response = web.post(f"/assets/{asset.id}/share", {"action": "link"}, HTTP_ACCEPT="application/json")
    assert response.status_code == 403
    mine = make_image(people["vic"].user, "vic's own")
    login(web, people["vic"])  # a viewer cannot add to the team
    response = web.post(f"/assets/{mine.id}/share", {"action": "team", "team": people["team"].id},
                        HTTP_ACCEPT="application/json")
    assert response.status_code == 403 and response.json()["error"]["param"] == "team"
    login(web, people["eve"])
    assert web.post(f"/assets/{mine.id}/share", {"action": "link"}).status_code == 404


def test_sharing_to_a_team_makes_it_visible_there_and_private_hides_it_again(web, people):
    asset = make_image(people["bob"].user, "bob's sketch")
    assert status(web, people["alice"], f"/assets/{asset.id}/") == 404
    login(web, people["bob"])
    response = web.post(f"/assets/{asset.id}/share", {"action": "team", "team": people["team"].id},
                        HTTP_ACCEPT="application/json")
    assert response.json()["visibility"] == "team"
    assert status(web, people["alice"], f"/assets/{asset.id}/") == 200
    login(web, people["bob"])
    web.post(f"/assets/{asset.id}/share", {"action": "private"})
    assert status(web, people["alice"], f"/assets/{asset.id}/") == 404


def test_link_sharing_works_signed_out_and_stops_at_revoke(web, people):
    asset = make_image(people["alice"].user, "sunset for the client")
    login(web, people["alice"])
    link = web.post(f"/assets/{asset.id}/share", {"action": "link"}, HTTP_ACCEPT="application/json").json()
    token = Asset.objects.get(id=asset.id).share_token
    assert len(token) >= 43 and link["share_url"].endswith(f"/s/{token}")
    web.logout()
    for url in (f"/s/{token}", f"/s/{token}/file", f"/s/{token}/thumb", f"/assets/{asset.id}/file?t={token}"):
        assert web.get(url).status_code == 200, url
    assert "sunset for the client" in web.get(f"/s/{token}").content.decode()
    assert web.get(f"/assets/{asset.id}/file?t=wrong-token").status_code == 404
    assert web.get(f"/assets/{asset.id}/").status_code == 302  # the studio page still needs sign-in

    login(web, people["alice"])
    web.post(f"/assets/{asset.id}/share", {"action": "revoke"})
    web.logout()
    for url in (f"/s/{token}", f"/s/{token}/file", f"/s/{token}/thumb", f"/assets/{asset.id}/file?t={token}"):
        assert web.get(url).status_code == 404, url
    login(web, people["alice"])
    web.post(f"/assets/{asset.id}/share", {"action": "link"})
    assert Asset.objects.get(id=asset.id).share_token != token  # a new link, the old one stays dead


def test_link_shared_team_asset_stays_visible_to_the_team(web, people):
    asset = make_image(people["alice"].user, "team poster", team=people["team"])
    login(web, people["alice"])
    web.post(f"/assets/{asset.id}/share", {"action": "link"})
    assert status(web, people["vic"], f"/assets/{asset.id}/") == 200
    login(web, people["alice"])
    web.post(f"/assets/{asset.id}/share", {"action": "revoke"})
    assert Asset.objects.get(id=asset.id).visibility == Visibility.TEAM


def test_bad_share_action_is_a_400_naming_the_field(web, people):
    asset = make_image(people["alice"].user, "x")
    login(web, people["alice"])
    response = web.post(f"/assets/{asset.id}/share", {"action": "everyone"}, HTTP_ACCEPT="application/json")
    assert response.status_code == 400 and response.json()["error"]["param"] == "action"


def test_jobs_are_followed_by_their_owner_and_team_only(people):
    own = Generation.objects.create(user=people["alice"].user, model_id="m", route="native",
                                    events=[{"type": "started", "seq": 1}])
    team_job = Generation.objects.create(user=people["bob"].user, team=people["team"], model_id="m", route="native")
    assert access.can_see_generation(people["alice"].user.id, str(own.id)) == [{"type": "started", "seq": 1}]
    assert access.can_see_generation(people["bob"].user.id, str(own.id)) is None
    assert access.can_see_generation(people["vic"].user.id, str(team_job.id)) == []
    assert access.can_see_generation(people["eve"].user.id, str(team_job.id)) is None
    assert access.can_see_generation(people["alice"].user.id, "not-a-uuid") is None


def test_gallery_json_never_lists_what_the_user_may_not_see(web, people):
    make_image(people["alice"].user, "alice private")
    make_image(people["eve"].user, "eve private")
    visible = make_image(people["bob"].user, "team poster", team=people["team"])
    login(web, people["vic"])
    assert [i["id"] for i in web.get("/gallery/page").json()["items"]] == [str(visible.id)]
    login(web, people["eve"])
    assert web.get("/gallery/page", {"team": people["team"].id}).json()["items"] == []
