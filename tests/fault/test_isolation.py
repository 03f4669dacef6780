"""Cross-user isolation: two users in two teams; each page and /v1 task route refuses the other's
rows with a 404 or 403 (or sends them to sign in), and never shows their content. A form naming
another user's asset answers as it does for an asset that does not exist."""

from __future__ import annotations

import io
import json
import uuid

import pytest
from django.core.files.base import ContentFile
from PIL import Image

from tests.fault import tally

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.fault]

SECRET_PROMPT = "alice-private-prompt-7f3a"
VIDEO = {"model": "alpha-2.0-fast", "content": [{"type": "text", "text": SECRET_PROMPT}]}
TASK_ROUTES = ["/v1/alpha/video/generations/{id}", "/v1/beta/video/generations/{id}", "/v1/video/generations/{id}"]


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), "blue").save(out, "PNG")
    return out.getvalue()


@pytest.fixture
def two_teams(make_account):
    from studio.models import Asset, Membership, Prompt, Team

    alice, bob = make_account("alice"), make_account("bob")
    team_a, team_b = Team.objects.create(name="A", slug="team-a"), Team.objects.create(name="B", slug="team-b")
    Membership.objects.create(team=team_a, user=alice.user, role="owner")
    Membership.objects.create(team=team_b, user=bob.user, role="owner")
    asset = Asset(owner=alice.user, team=team_a, mime="image/png", metadata={"prompt": SECRET_PROMPT})
    asset.file.save("a.png", ContentFile(_png()), save=False)
    asset.save()
    prompt = Prompt.objects.create(owner=alice.user, text=SECRET_PROMPT, saved=True)
    return {"alice": alice, "bob": bob, "team_a": team_a, "asset": asset, "prompt": prompt}


def _pages(t) -> list[tuple[str, str]]:
    a = t["asset"].id
    return [("GET", f"/assets/{a}/"), ("GET", f"/assets/{a}/thumb"), ("GET", f"/assets/{a}/file"),
            ("POST", f"/assets/{a}/star"), ("POST", f"/assets/{a}/delete"), ("POST", f"/assets/{a}/share"),
            ("GET", f"/teams/{t['team_a'].slug}/"), ("POST", f"/teams/{t['team_a'].slug}/members"),
            ("POST", f"/teams/{t['team_a'].slug}/delete"), ("POST", f"/keys/{t['alice'].key.id}/revoke"),
            ("POST", f"/keys/{t['alice'].key.id}/update"), ("GET", f"/keys/{t['alice'].key.id}/limits"),
            ("GET", f"/prompts/{t['prompt'].id}/edit"), ("POST", f"/prompts/{t['prompt'].id}/delete"),
            ("GET", "/gallery/"), ("GET", "/gallery/page"), ("GET", "/prompts/"), ("GET", "/keys/"),
            ("GET", "/usage/"), ("GET", "/teams/")]


def test_studio_pages_do_not_show_or_change_another_users_rows(two_teams, web):
    from studio.models import ApiKey, Asset, Prompt, Team

    web.force_login(two_teams["bob"].user)
    leaks = []
    for method, url in _pages(two_teams):
        response = web.get(url) if method == "GET" else web.post(url, {"role": "owner", "username": "bob"})
        tally.add("requests tried")
        content = b"" if response.streaming else response.content
        own_list = url in ("/gallery/", "/gallery/page", "/prompts/", "/keys/", "/usage/", "/teams/")
        if (not own_list and response.status_code not in (403, 404, 405)) or SECRET_PROMPT.encode() in content:
            leaks.append(f"{method} {url}: {response.status_code}")
    tally.add("cross-user leaks", len(leaks))
    assert not leaks, leaks
    assert Asset.objects.filter(id=two_teams["asset"].id, starred=False).exists()
    assert Prompt.objects.filter(id=two_teams["prompt"].id).exists() and Team.objects.filter(slug="team-a").exists()
    assert not ApiKey.objects.get(id=two_teams["alice"].key.id).revoked


async def test_v1_task_routes_do_not_show_another_users_task(client, two_teams):
    alice, bob = two_teams["alice"], two_teams["bob"]
    created = await client.post("/v1/alpha/video/generations", json=VIDEO,
                                headers={"Authorization": f"Bearer {alice.secret}"})
    assert created.status_code == 200, created.text
    task_id = created.json()["id"]
    leaks = []
    for route in TASK_ROUTES:
        response = await client.get(route.format(id=task_id), headers={"Authorization": f"Bearer {bob.secret}"})
        tally.add("requests tried")
        # Protocol B answers a task the caller may not see as its vendor answers an unknown one:
        # 200 with task_status UNKNOWN and nothing of the task.
        unknown = response.status_code == 200 and "/beta/" in route and (
            response.json().get("output", {}).get("task_status") == "UNKNOWN")
        if (response.status_code != 404 and not unknown) or SECRET_PROMPT in response.text:
            leaks.append(f"{route}: {response.status_code}")
    tally.add("cross-user leaks", len(leaks))
    assert not leaks, leaks
    own = await client.get(TASK_ROUTES[0].format(id=task_id), headers={"Authorization": f"Bearer {alice.secret}"})
    assert own.status_code == 200  # the owner still sees it


@pytest.fixture
def alice_session(two_teams):
    from studio.gateway.native import edit_sessions

    return edit_sessions.create_session(two_teams["alice"].user, two_teams["asset"], "delta-3.1-flash-image",
                                        title=SECRET_PROMPT)


def _studio_paths(t, session) -> list[tuple[str, str, dict]]:
    """Pages that name one of another user's rows in their path: each must be a 404."""
    a, s = t["asset"].id, session.id
    edit = {"prompt": "make it red", "model": "delta-3.1-flash-image"}
    return [("GET", f"/edit/{s}/", {}), ("GET", f"/edit/{s}/tree", {}), ("JSON", f"/edit/{s}/head", {"turn": "1"}),
            ("GET", f"/canvas/{a}/", {}), ("JSON", f"/canvas/{a}/edit", edit),
            ("GET", f"/assets/{a}/layers", {}), ("GET", f"/assets/{a}/layers.psd", {}),
            ("GET", f"/assets/{a}/layers.zip", {}), ("GET", f"/assets/{a}/set", {}),
            ("GET", f"/assets/{a}/actions", {})]


def _field_requests(a: str) -> list[tuple[str, str, dict | str]]:
    """Forms and page calls that name another user's asset in their body: each answers as for an id
    that does not exist (so nothing tells the asset is there)."""
    items = [{"asset": a, "role": "the subject"}, {"asset": a, "role": "the style"}]
    return [("POST", "/edit/new", {"asset": a, "model": "delta-3.1-flash-image"}),
            ("JSON", "/compose/start", {"prompt": "both", "model": "delta-3.1-flash-image", "items": items}),
            ("JSON", "/video/create", {"model": "alpha-2.0-fast", "prompt": "tide", "first_frame": a}),
            ("GET", f"/compose/?input={a}", ""), ("GET", f"/edit/?asset={a}", "")]


def _send(web, method: str, url: str, data):
    if method == "JSON":
        return web.post(url, data=json.dumps(data), content_type="application/json")
    return web.post(url, data) if method == "POST" else web.get(url)


def test_studio_tools_refuse_another_users_sessions_and_assets_with_a_404(two_teams, alice_session, web):
    from studio.models import EditSession

    web.force_login(two_teams["alice"].user)
    assert web.get(f"/edit/{alice_session.id}/").status_code == 200  # the owner's own pages work
    assert web.get(f"/canvas/{two_teams['asset'].id}/").status_code == 200
    web.force_login(two_teams["bob"].user)
    leaks = []
    for method, url, data in _studio_paths(two_teams, alice_session):
        response = _send(web, method, url, data)
        tally.add("requests tried")
        content = b"" if response.streaming else response.content
        if response.status_code != 404 or SECRET_PROMPT.encode() in content:
            leaks.append(f"{method} {url}: {response.status_code}")
    asset_id, missing = str(two_teams["asset"].id), str(uuid.uuid4())
    for method, url, data in _field_requests(asset_id):
        response = _send(web, method, url, data)
        as_if_missing = _send(web, method, url.replace(asset_id, missing),
                              json.loads(json.dumps(data).replace(asset_id, missing)))
        tally.add("requests tried", 2)
        same = response.status_code == as_if_missing.status_code and (
            response.content.replace(asset_id.encode(), missing.encode()) == as_if_missing.content
            if response["Content-Type"].startswith("application/json") else asset_id.encode() not in response.content)
        if not same or (method != "GET" and response.status_code < 400) or SECRET_PROMPT.encode() in response.content:
            leaks.append(f"{method} {url}: {response.status_code} {response.content[:200]!r} differs from a missing "
                         f"id's {as_if_missing.status_code} {as_if_missing.content[:200]!r}")
    tally.add("cross-user leaks", len(leaks))
    assert not leaks, leaks
    assert EditSession.objects.filter(owner=two_teams["alice"].user).count() == 1


async def test_v1_cancel_list_and_stored_responses_do_not_reach_another_users_rows(client, two_teams):
    from studio.models import VideoTask

    alice, bob = two_teams["alice"], two_teams["bob"]
    as_alice, as_bob = {"Authorization": f"Bearer {alice.secret}"}, {"Authorization": f"Bearer {bob.secret}"}
    created = await client.post("/v1/alpha/video/generations", json=VIDEO, headers=as_alice)
    stored = await client.post("/v1/responses", json={"model": "omicron-4-mini", "input": SECRET_PROMPT},
                               headers=as_alice)
    assert created.status_code == 200 and stored.status_code == 200, (created.text, stored.text)
    task_id, response_id = created.json()["id"], stored.json()["id"]
    leaks = []
    for method, url in (("DELETE", f"/v1/alpha/video/generations/{task_id}"),
                        ("POST", f"/v1/beta/video/generations/{task_id}/cancel"),
                        ("POST", f"/v1/video/generations/{task_id}/cancel"),
                        ("GET", f"/v1/responses/{response_id}"), ("GET", f"/v1/responses/{response_id}/input_items"),
                        ("DELETE", f"/v1/responses/{response_id}")):
        response = await client.request(method, url, headers=as_bob)
        tally.add("requests tried")
        if response.status_code != 404 or SECRET_PROMPT in response.text:
            leaks.append(f"{method} {url}: {response.status_code} {response.text[:200]}")
    listed = await client.get("/v1/alpha/video/generations", headers=as_bob)
    tally.add("requests tried")
    if listed.status_code != 200 or task_id in listed.text or SECRET_PROMPT in listed.text:
        leaks.append(f"GET /v1/alpha/video/generations: {listed.status_code} shows the other user's task")
    tally.add("cross-user leaks", len(leaks))
    assert not leaks, leaks
    # Nothing changed for the owner: the task is not cancelled, the response is still there.
    assert (await VideoTask.objects.aget(id=task_id)).status != "cancelled"
    own = await client.get(f"/v1/responses/{response_id}/input_items", headers=as_alice)
    assert own.status_code == 200 and SECRET_PROMPT in own.text
    own_list = await client.get("/v1/alpha/video/generations", headers=as_alice)
    assert task_id in own_list.text


def _video_task(user, asset, prompt: str):
    from datetime import timedelta

    from django.utils import timezone

    from studio.models import Upstream, VideoTask

    now = timezone.now()
    return VideoTask.objects.create(
        user=user, protocol="ark", model_id="alpha-2.0-fast", upstream=Upstream.objects.get(name="Sandbox"),
        upstream_protocol="ark", upstream_model="m", upstream_task_id=f"cgt-{prompt[:8]}", status="succeeded",
        prompt=prompt, video=asset, next_poll_at=now, expires_at=now + timedelta(days=1))


def test_the_video_page_and_file_links_do_not_reach_another_users_task(two_teams, web):
    from studio.gateway.video.signing import file_path

    alice_task = _video_task(two_teams["alice"].user, two_teams["asset"], SECRET_PROMPT)
    bob_task = _video_task(two_teams["bob"].user, None, "bob's own tide")
    web.force_login(two_teams["alice"].user)
    assert web.get(file_path(alice_task.id, "video.mp4")).status_code == 200  # the signed link works
    web.force_login(two_teams["bob"].user)
    own_sig = file_path(bob_task.id, "video.mp4").split("?")[1]  # a real signature, for another task
    leaks = []
    for url, expected in ((f"/video/files/{alice_task.id}/video.mp4", 404),
                          (f"/video/files/{alice_task.id}/video.mp4?{own_sig}", 404),
                          (f"/video/files/{alice_task.id}/video.mp4?sig=forged", 404),
                          (f"/video/tasks?ids={alice_task.id}", 200), ("/video/", 200)):
        response = web.get(url)
        tally.add("requests tried")
        content = b"" if response.streaming else response.content
        if response.status_code != expected or SECRET_PROMPT.encode() in content or (
                expected == 200 and alice_task.id.encode() in content):
            leaks.append(f"GET {url}: {response.status_code}")
    tally.add("cross-user leaks", len(leaks))
    assert not leaks, leaks
