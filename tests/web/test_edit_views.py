"""Edit-session pages: starting from a gallery image or an upload, the page, the tree JSON, the head,
and a session nobody else can see."""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from studio.gateway.media.storage import store_bytes
from studio.gateway.native import edit_sessions
from studio.models import Membership, Team
from studio.models.edits import EditSession

pytestmark = pytest.mark.django_db

MODEL = "delta-3.1-flash-image"


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (50, 40), "green").save(buffer, "PNG")
    return buffer.getvalue()


@pytest.fixture
def signed_in(web, alice):
    web.force_login(alice.user)
    return web


def test_start_from_a_gallery_image(signed_in, alice):
    asset = store_bytes(png(), "image/png", owner_id=alice.user.id)
    page = signed_in.get(f"/edit/?asset={asset.id}")
    assert page.status_code == 200 and f"/assets/{asset.id}/file" in page.content.decode()
    response = signed_in.post("/edit/new", {"asset": str(asset.id), "model": MODEL, "title": "Logo"})
    session = EditSession.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/edit/{session.id}/"
    assert session.source_id == asset.id and session.title == "Logo" and session.owner_id == alice.user.id
    page = signed_in.get(f"/edit/{session.id}/")
    assert page.status_code == 200 and "Logo" in page.content.decode()
    assert signed_in.get("/edit/").content.decode().count(f"/edit/{session.id}/") == 1


def test_start_from_an_upload(signed_in):
    upload = SimpleUploadedFile("mine.png", png(), content_type="image/png")
    response = signed_in.post("/edit/new", {"file": upload, "model": MODEL})
    assert response.status_code == 302
    assert EditSession.objects.get().source.metadata["filename"] == "mine.png"


def test_bad_starts_name_the_field(signed_in, make_account):
    response = signed_in.post("/edit/new", {"model": MODEL})
    assert response.status_code == 400 and "choose an image" in response.content.decode()
    bad = SimpleUploadedFile("x.png", b"not an image", content_type="image/png")
    assert signed_in.post("/edit/new", {"file": bad, "model": MODEL}).status_code == 400
    other = make_account("bob")
    theirs = store_bytes(png(), "image/png", owner_id=other.user.id)
    refused = signed_in.post("/edit/new", {"asset": str(theirs.id), "model": MODEL})
    assert refused.status_code == 400 and "not in your gallery" in refused.content.decode()
    wrong = signed_in.post("/edit/new", {"asset": str(theirs.id), "model": "omicron-4-mini"})
    assert wrong.status_code == 400 and "edits images" in wrong.content.decode()
    assert EditSession.objects.count() == 0


def test_tree_and_head(signed_in, alice):
    source = store_bytes(png(), "image/png", owner_id=alice.user.id)
    session = edit_sessions.create_session(alice.user, source, MODEL)
    user = {"role": "user", "parts": [{"text": "a"}]}
    one = edit_sessions.start_turn(session, None, "a", MODEL, user)
    edit_sessions.start_turn(session, None, "b", MODEL, user)
    tree = signed_in.get(f"/edit/{session.id}/tree").json()
    assert tree["roots"] == [str(one.id), tree["head"]]
    moved = signed_in.post(f"/edit/{session.id}/head", json.dumps({"turn": str(one.id)}), content_type="application/json")
    assert moved.status_code == 200 and moved.json()["head"] == str(one.id)
    assert EditSession.objects.get().head_id == one.id
    wrong = signed_in.post(f"/edit/{session.id}/head", json.dumps({"turn": "nope"}), content_type="application/json")
    assert wrong.status_code == 400 and wrong.json()["error"]["param"] == "turn"


def test_strangers_get_404_and_team_viewers_only_look(web, alice, make_account):
    source = store_bytes(png(), "image/png", owner_id=alice.user.id)
    session = edit_sessions.create_session(alice.user, source, MODEL)
    bob = make_account("bob")
    web.force_login(bob.user)
    assert web.get(f"/edit/{session.id}/").status_code == 404
    assert web.get(f"/edit/{session.id}/tree").status_code == 404
    assert web.get("/edit/00000000-0000-0000-0000-000000000000/").status_code == 404
    team = Team.objects.create(name="Brand", slug="brand")
    Membership.objects.create(team=team, user=bob.user, role="viewer")
    EditSession.objects.filter(id=session.id).update(team=team)
    page = web.get(f"/edit/{session.id}/")
    assert page.status_code == 200 and "members can add turns" in page.content.decode()
    refused = web.post(f"/edit/{session.id}/head", json.dumps({"turn": "x"}), content_type="application/json")
    assert refused.status_code == 403
