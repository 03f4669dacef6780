"""Edit-session turns over the studio socket: live events, exact replay through the sandbox's strict
signature check, regenerate and branch, blocked and failed turns, and who may add turns."""

from __future__ import annotations

import io

import pytest
from asgiref.sync import sync_to_async
from PIL import Image

from studio.gateway.media.storage import store_bytes
from studio.gateway.native import edit_sessions
from studio.models import Generation, Membership, Team
from studio.models.edits import EditSession, EditTurn
from tests.gateway.jobs.edit_support import MODEL, edit, new_session, settle, turn_of
from tests.realtime.socket_helpers import connect, of_kind

pytestmark = pytest.mark.django_db(transaction=True)


async def test_three_turns_replay_the_model_content_exactly(alice, catalog):
    session = await new_session(alice.user)
    socket = await connect(alice.user)
    first = await edit(socket, session=str(session.id), instruction="make the sky purple")
    assert first[-1]["type"] == "job.completed", first
    assert first[-1]["data"]["status"] == "succeeded"
    assert of_kind(first, "job.image") and "edited image" in first[-1]["data"]["text"]
    one = await turn_of(first)
    assert one.status == "succeeded" and one.output_id is not None and one.parent_id is None
    stored_model = await sync_to_async(edit_sessions.read_content)(one.model_content)
    # Every part kept, including the signatures the next request must send back.
    assert stored_model["role"] == "model"
    assert [bool(p.get("thoughtSignature")) for p in stored_model["parts"]] == [True, True]

    # The second turn passes the sandbox's strict check only if the replay is exact.
    second = await edit(socket, session=str(session.id), parent=str(one.id), instruction="add a moon")
    assert second[-1]["type"] == "job.completed", second
    two = await turn_of(second)
    assert two.parent_id == one.id and two.status == "succeeded"
    third = await edit(socket, session=str(session.id), parent=str(two.id), instruction="now at night")
    assert third[-1]["data"]["status"] == "succeeded"
    await socket.disconnect()
    await settle()

    generation = await Generation.objects.aget(id=third[-1]["id"])
    assert generation.parameters["turns"] == 3 and generation.prompt == "now at night"
    last = await EditTurn.objects.aget(id=third[-1]["data"]["turn"])
    user_content = await sync_to_async(edit_sessions.read_content)(last.user_content)
    assert user_content == {"role": "user", "parts": [{"text": "now at night"}]}
    refreshed = await EditSession.objects.aget(id=session.id)
    assert str(refreshed.head_id) == third[-1]["data"]["turn"]


async def test_a_lost_signature_fails_the_turn_with_the_vendor_message(alice, catalog):
    session = await new_session(alice.user)
    socket = await connect(alice.user)
    first = await edit(socket, session=str(session.id), instruction="warmer colours")
    one = await turn_of(first)
    # Damage the stored model content as a careless client would: drop the image's signature.
    content = await sync_to_async(edit_sessions.read_content)(one.model_content)
    for part in content["parts"]:
        part.pop("thoughtSignature", None)
    await sync_to_async(edit_sessions.write_content)(one, "model_content", content)
    await one.asave()
    events = await edit(socket, session=str(session.id), parent=str(one.id), instruction="cooler")
    failed = events[-1]
    assert failed["type"] == "job.failed" and failed["data"]["status"] == 400
    assert "thought_signature" in failed["data"]["message"]
    turn = await turn_of(events)
    assert turn.status == "failed" and turn.error["status"] == 400
    await socket.disconnect()
    await settle()


async def test_regenerate_makes_a_sibling_and_branches_hang_anywhere(alice, catalog):
    session = await new_session(alice.user)
    socket = await connect(alice.user)
    one = await turn_of(await edit(socket, session=str(session.id), instruction="crop tighter"))
    again = await turn_of(await edit(socket, session=str(session.id), regenerate=str(one.id)))
    assert again.parent_id is None and again.instruction == "crop tighter" and again.id != one.id
    child = await turn_of(await edit(socket, session=str(session.id), parent=str(one.id), instruction="more contrast"))
    branch = await turn_of(await edit(socket, session=str(session.id), parent=str(one.id), instruction="less contrast"))
    assert child.parent_id == branch.parent_id == one.id
    await socket.disconnect()
    await settle()
    tree = await sync_to_async(edit_sessions.tree)(await EditSession.objects.aget(id=session.id))
    assert tree["roots"] == [str(one.id), str(again.id)]
    assert tree["turns"][str(branch.id)]["sibling_index"] == 2 and tree["turns"][str(branch.id)]["sibling_count"] == 2
    assert tree["path"] == [str(one.id), str(branch.id)]


async def test_blocked_turn_keeps_the_reason_and_cannot_be_continued(alice, catalog):
    session = await new_session(alice.user)
    socket = await connect(alice.user)
    events = await edit(socket, session=str(session.id), instruction="[block] something")
    assert events[-1]["type"] == "job.completed"
    assert events[-1]["data"]["status"] == "blocked" and events[-1]["data"]["block_reason"] == "PROHIBITED_CONTENT"
    blocked = await turn_of(events)
    assert blocked.status == "blocked" and blocked.finish_reason == "PROHIBITED_CONTENT"
    refused = await edit(socket, session=str(session.id), parent=str(blocked.id), instruction="try again")
    assert refused[-1]["type"] == "job.rejected" and refused[-1]["data"]["param"] == "parent"
    await socket.disconnect()
    await settle()


async def test_bad_messages_are_refused_naming_the_field(alice, catalog, make_account):
    session = await new_session(alice.user)
    socket = await connect(alice.user)
    empty = await edit(socket, session=str(session.id), instruction="   ")
    assert empty[-1]["type"] == "job.rejected" and empty[-1]["data"]["param"] == "instruction"
    wrong_model = await edit(socket, session=str(session.id), instruction="x", model="omicron-4-mini")
    assert wrong_model[-1]["data"]["param"] == "model"
    stranger = await edit(socket, session=str(session.id), parent="not-a-turn", instruction="x")
    assert stranger[-1]["data"]["param"] == "parent"
    await socket.disconnect()

    bob = await sync_to_async(make_account)("bob")
    other = await connect(bob.user)
    refused = await edit(other, session=str(session.id), instruction="mine now")
    assert refused[-1]["type"] == "job.rejected" and refused[-1]["data"]["param"] == "session"
    await other.disconnect()
    assert await EditTurn.objects.acount() == 0


async def test_team_members_continue_a_team_session_viewers_only_watch(alice, catalog, make_account):
    team = await Team.objects.acreate(name="Design", slug="design")
    bob = await sync_to_async(make_account)("bob")
    carol = await sync_to_async(make_account)("carol")
    await Membership.objects.acreate(team=team, user=alice.user, role="owner")
    await Membership.objects.acreate(team=team, user=bob.user, role="member")
    await Membership.objects.acreate(team=team, user=carol.user, role="viewer")
    session = await new_session(alice.user, team_id=team.id)
    socket = await connect(bob.user)
    events = await edit(socket, session=str(session.id), instruction="team tweak")
    assert events[-1]["type"] == "job.completed"
    generation = await Generation.objects.aget(id=events[-1]["id"])
    assert generation.team_id == team.id and generation.user_id == bob.user.id
    await socket.disconnect()
    viewer = await connect(carol.user)
    refused = await edit(viewer, session=str(session.id), instruction="viewer tweak")
    assert refused[-1]["type"] == "job.rejected" and refused[-1]["data"]["param"] == "session"
    await viewer.disconnect()
    await settle()


async def test_region_edits_follow_the_named_thing_across_turns_and_models(alice, catalog):
    """A sandbox scene keeps its named regions through the gateway: the native model removes the
    cat, then an images model recolours the house of that picture."""
    from studio.sandbox import regions
    from studio.sandbox.imaging import encode_image, render_prompt_image

    scene = encode_image(render_prompt_image("an orange cat by a house in a sunny meadow", 768, 512, seed=7))
    source = await sync_to_async(store_bytes)(scene, "image/png", owner_id=alice.user.id, is_input=True)
    session = await sync_to_async(edit_sessions.create_session)(alice.user, source, MODEL, title="Meadow")
    socket = await connect(alice.user)
    first = await edit(socket, session=str(session.id), instruction="remove the cat")
    assert first[-1]["data"]["status"] == "succeeded", first[-1]
    turn = await turn_of(first)
    second = await edit(socket, session=str(session.id), parent=str(turn.id), instruction="make the house blue",
                        model="kappa-image-1")
    assert second[-1]["data"].get("status") == "succeeded", second[-1]
    child = await turn_of(second)
    await socket.disconnect()
    await settle()

    def picture(asset) -> Image.Image:
        image = Image.open(io.BytesIO(asset.file.read()))
        image.load()
        return image

    removed, recoloured = await sync_to_async(picture)(turn.output), await sync_to_async(picture)(child.output)
    assert [r for r in regions.noted(removed) if r.kind == "cat"] == []
    house = next(r for r in regions.noted(recoloured) if r.kind == "house")
    assert house.colour == "blue"
    outline = regions.silhouette(house, recoloured.size)
    r, g, b = [sum(band) / max(1, len(band)) for band in zip(*(
        px for px, inside in zip(recoloured.convert("RGB").getdata(), outline.getdata(), strict=True) if inside),
        strict=True)]
    assert b > r + 40
