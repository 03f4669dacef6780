"""The gallery page and its JSON pages: what is listed, search, filters, cursor pages, star,
detail (cost, lineage), download, delete and bulk actions."""

from __future__ import annotations

import io
import uuid
from decimal import Decimal

import pytest
from PIL import Image

from studio.models import Asset, Collection, Visibility
from tests.web.library_factories import body_of, login, make_image, make_team

pytestmark = pytest.mark.django_db(transaction=True)


def page_ids(web, **params) -> list[str]:
    response = web.get("/gallery/page", params)
    assert response.status_code == 200, response.content
    return [item["id"] for item in response.json()["items"]]


def test_lists_own_and_team_assets_newest_first_but_not_inputs_drafts_or_strangers(web, make_account):
    alice, bob, eve = make_account("alice"), make_account("bob"), make_account("eve")
    team = make_team(alice.user, "Design", bob=(bob.user, "viewer"))
    old = make_image(alice.user, "old lighthouse", minutes_ago=30)
    new = make_image(alice.user, "new lighthouse", minutes_ago=1)
    shared = make_image(eve.user, "team poster", team=team, minutes_ago=5)  # eve left the team, asset stays
    make_image(alice.user, "an input", is_input=True)
    make_image(alice.user, "a draft", is_draft=True)
    make_image(eve.user, "eve's private")
    make_image(bob.user, "bob's private")

    login(web, alice)
    assert page_ids(web) == [str(new.id), str(shared.id), str(old.id)]
    html = web.get("/gallery/").content.decode()
    assert "new lighthouse" in html and "team poster" in html
    assert "eve&#x27;s private" not in html and "bob&#x27;s private" not in html and "a draft" not in html


def test_search_and_filters(web, make_account):
    alice = make_account("alice")
    team = make_team(alice.user, "Studio A")
    fox = make_image(alice.user, "A red FOX in snow", minutes_ago=3 * 24 * 60)
    cat = make_image(alice.user, "a cat on a sofa", model="kappa-image-1", starred=True)
    team_asset = make_image(alice.user, "team fox", team=team)
    collection = Collection.objects.create(name="Foxes", owner=alice.user)
    Asset.objects.filter(id=fox.id).update(collection=collection)
    login(web, alice)

    assert set(page_ids(web, q="fox")) == {str(fox.id), str(team_asset.id)}
    assert page_ids(web, model="kappa-image-1") == [str(cat.id)]
    assert page_ids(web, starred="1") == [str(cat.id)]
    assert page_ids(web, team=str(team.id)) == [str(team_asset.id)]
    assert page_ids(web, collection=str(collection.id)) == [str(fox.id)]
    assert page_ids(web, kind="video") == []
    fox_day = fox.created.date().isoformat()
    assert page_ids(web, since=fox_day, until=fox_day) == [str(fox.id)]
    assert str(fox.id) not in page_ids(web, since=cat.created.date().isoformat())


@pytest.mark.parametrize("params, field", [
    ({"kind": "hologram"}, "kind"), ({"since": "yesterday"}, "since"), ({"team": "x"}, "team"),
    ({"cursor": "not-a-cursor"}, "cursor"), ({"limit": "0"}, "limit"), ({"limit": "many"}, "limit"),
])
def test_bad_filters_are_400s_naming_the_field(web, make_account, params, field):
    login(web, make_account("alice"))
    response = web.get("/gallery/page", params)
    assert response.status_code == 400
    assert response.json()["error"]["param"] == field
    assert web.get("/gallery/", params).status_code == 200  # the page shows the message instead


def test_cursor_pages_neither_skip_nor_repeat_even_with_equal_timestamps(web, make_account):
    alice = make_account("alice")
    made = [make_image(alice.user, f"image {i}", minutes_ago=i // 3) for i in range(14)]  # triples share a time
    login(web, alice)
    seen, cursor = [], None
    while True:
        response = web.get("/gallery/page", {"limit": 4, **({"cursor": cursor} if cursor else {})}).json()
        seen += [item["id"] for item in response["items"]]
        cursor = response["next"]
        if not cursor:
            break
    expected = sorted(made, key=lambda a: (a.created, a.id), reverse=True)
    assert seen == [str(a.id) for a in expected]


def test_star_toggles_and_viewers_cannot_star(web, make_account):
    alice, bob = make_account("alice"), make_account("bob")
    team = make_team(alice.user, "Design", bob=(bob.user, "viewer"))
    asset = make_image(alice.user, "poster", team=team)
    login(web, alice)
    response = web.post(f"/assets/{asset.id}/star", HTTP_ACCEPT="application/json")
    assert response.json() == {"id": str(asset.id), "starred": True}
    assert web.post(f"/assets/{asset.id}/star", {"starred": "1"}, HTTP_ACCEPT="application/json").json()["starred"]
    login(web, bob)
    assert web.post(f"/assets/{asset.id}/star", HTTP_ACCEPT="application/json").status_code == 403
    assert Asset.objects.get(id=asset.id).starred is True


def test_detail_shows_prompt_parameters_cost_and_lineage(web, make_account):
    alice = make_account("alice")
    parent = make_image(alice.user, "a plain vase", minutes_ago=10)
    child = make_image(alice.user, "the vase, now blue", parent=parent.generation, minutes_ago=5)
    grandchild = make_image(alice.user, "the blue vase with flowers", parent=child.generation)
    child.generation.cost_usd = Decimal("0.038703")  # recorded when the call finished
    child.generation.save(update_fields=["cost_usd"])
    login(web, alice)
    html = web.get(f"/assets/{child.id}/").content.decode()
    assert "the vase, now blue" in html and "delta-3.1-flash-image" in html and "aspect_ratio" in html
    assert f"/assets/{parent.id}/thumb" in html and f"/assets/{grandchild.id}/thumb" in html
    assert "$0.038703" in html
    assert f"/generate/?input={child.id}" in html


def test_download_is_an_attachment(web, make_account):
    alice = make_account("alice")
    asset = make_image(alice.user, "poster")
    login(web, alice)
    response = web.get(f"/assets/{asset.id}/file", {"download": "1"})
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment;")
    assert response["Content-Disposition"].endswith('.png"')
    assert body_of(response)[:8] == b"\x89PNG\r\n\x1a\n"


def test_thumbnail_is_a_small_webp_made_once(web, make_account, monkeypatch):
    from studio.web import thumbnails

    alice = make_account("alice")
    asset = make_image(alice.user, "wide", data=_png_bytes((2048, 1024)))
    login(web, alice)
    calls = []
    original = thumbnails.render_thumbnail
    monkeypatch.setattr(thumbnails, "render_thumbnail", lambda a: calls.append(a.id) or original(a))
    for _ in range(2):
        response = web.get(f"/assets/{asset.id}/thumb")
        assert response.status_code == 200 and response["Content-Type"] == "image/webp"
        image = Image.open(io.BytesIO(body_of(response)))
        assert image.format == "WEBP" and image.size == (320, 160)
    assert calls == [asset.id]
    assert Asset.objects.get(id=asset.id).thumbnail.name.endswith(".webp")


def _png_bytes(size):
    from tests.web.library_factories import png

    return png("navy", size)


def test_delete_by_owner_or_team_admin_only_and_files_go(web, make_account):
    alice, bob, carol, eve = (make_account(n) for n in ("alice", "bob", "carol", "eve"))
    team = make_team(alice.user, "Design", bob=(bob.user, "admin"), carol=(carol.user, "member"))
    mine = make_image(carol.user, "carol's team image", team=team)
    path = mine.file.path
    login(web, eve)
    assert web.post(f"/assets/{mine.id}/delete").status_code == 404
    login(web, carol)
    other = make_image(alice.user, "alice's team image", team=team)
    assert web.post(f"/assets/{other.id}/delete").status_code == 403
    login(web, bob)
    assert web.post(f"/assets/{mine.id}/delete").status_code == 302
    assert not Asset.objects.filter(id=mine.id).exists()
    import os

    assert not os.path.exists(path)


def test_bulk_star_move_and_delete_skip_what_the_user_may_not_change(web, make_account):
    alice, bob = make_account("alice"), make_account("bob")
    team = make_team(alice.user, "Design", bob=(bob.user, "member"))
    a1, a2 = make_image(bob.user, "bob one"), make_image(bob.user, "bob two")
    theirs = make_image(alice.user, "alice team", team=team)
    private = make_image(alice.user, "alice private")
    login(web, bob)
    ids = [str(a1.id), str(a2.id), str(theirs.id), str(private.id)]

    result = web.post("/gallery/bulk", {"action": "star", "ids": ids}, content_type="application/json").json()
    assert set(result["done"]) == {str(a1.id), str(a2.id), str(theirs.id)}
    assert result["skipped"] == [str(private.id)]  # invisible: skipped, not revealed

    result = web.post("/gallery/bulk", {"action": "move", "ids": ids[:3], "team": str(team.id)},
                      content_type="application/json").json()
    assert set(result["done"]) == {str(a1.id), str(a2.id), str(theirs.id)}
    a1.refresh_from_db()
    assert a1.team_id == team.id and a1.visibility == Visibility.TEAM

    folder = Collection.objects.create(name="Picks", owner=alice.user, team=team)
    result = web.post("/gallery/bulk", {"action": "move", "ids": [str(a1.id)], "collection": str(folder.id)},
                      content_type="application/json").json()
    assert result["done"] == [str(a1.id)]
    assert Asset.objects.get(id=a1.id).collection_id == folder.id

    result = web.post("/gallery/bulk", {"action": "delete", "ids": ids[:3]}, content_type="application/json").json()
    assert set(result["done"]) == {str(a1.id), str(a2.id)} and result["skipped"] == [str(theirs.id)]


@pytest.mark.parametrize("body, field", [
    ({"action": "paint", "ids": ["x"]}, "action"), ({"action": "star", "ids": []}, "ids"),
    ({"action": "star", "ids": ["nope"]}, "ids"), ({"action": "move", "ids": [str(uuid.uuid4())]}, "team"),
])
def test_bulk_rejects_bad_bodies_naming_the_field(web, make_account, body, field):
    login(web, make_account("alice"))
    response = web.post("/gallery/bulk", body, content_type="application/json")
    assert response.status_code == 400 and response.json()["error"]["param"] == field


def test_bulk_cannot_move_into_a_team_as_viewer(web, make_account):
    alice, bob = make_account("alice"), make_account("bob")
    team = make_team(alice.user, "Design", bob=(bob.user, "viewer"))
    mine = make_image(bob.user, "bob's")
    login(web, bob)
    response = web.post("/gallery/bulk", {"action": "move", "ids": [str(mine.id)], "team": str(team.id)},
                        content_type="application/json")
    assert response.status_code == 403 and response.json()["error"]["param"] == "team"
