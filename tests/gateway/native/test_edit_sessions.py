"""The edit tree: what a turn sends (exact replay of the parent's contents), siblings, branches,
the head and the path, and how answers become stored turns."""

from __future__ import annotations

import base64
import io

import orjson
import pytest
from PIL import Image

from studio.core.errors import BadRequest, NotFound
from studio.gateway.media.storage import store_bytes
from studio.gateway.native import edit_sessions
from studio.gateway.native.frames import BIG_STRING, parse_frame
from studio.gateway.native.result import NativeResult
from studio.models import Membership, Team
from studio.models.edits import EditSession

pytestmark = pytest.mark.django_db

MODEL = "delta-3.1-flash-image"


def png(size: tuple[int, int] = (40, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, "orange").save(buffer, "PNG")
    return buffer.getvalue()


@pytest.fixture
def session(alice) -> EditSession:
    source = store_bytes(png(), "image/png", owner_id=alice.user.id, is_input=True)
    return edit_sessions.create_session(alice.user, source, MODEL, title="Shoe")


def answered(session, parent, instruction, model_parts, output=None):
    """A turn as the job leaves it: user content stored at the start, the model content at the end."""
    contents = edit_sessions.request_contents(session, parent, instruction)
    turn = edit_sessions.start_turn(session, parent, instruction, MODEL, contents[-1])
    result = NativeResult()
    result.add({"candidates": [{"content": {"role": "model", "parts": model_parts}, "index": 0, "finishReason": "STOP"}]})
    if output is None:
        output = store_bytes(png((41, 30)), "image/png", owner_id=session.owner_id).id
    return edit_sessions.finish_turn(turn, content=edit_sessions.model_content(result), result=result,
                                     output_id=output, generation_id=None, error=None)


MODEL_PARTS = [
    {"text": "thinking", "thought": True},
    {"text": "Here it is", "thoughtSignature": "c2lnLXRleHQ="},
    {"inlineData": {"mimeType": "image/png", "data": "aW1hZ2U="}, "thoughtSignature": "c2lnLWltYWdl", "extra": {"kept": 1}},
]


def test_a_first_turn_sends_the_source_image_then_the_instruction(session):
    contents = edit_sessions.request_contents(session, None, "make it blue")
    assert len(contents) == 1 and contents[0]["role"] == "user"
    image, text = contents[0]["parts"]
    assert base64.b64decode(image["inlineData"]["data"]) == session.source.file.open("rb").read()
    assert image["inlineData"]["mimeType"] == "image/png" and text == {"text": "make it blue"}


def test_a_child_replays_the_parent_user_turn_and_complete_model_content_exactly(session):
    one = answered(session, None, "make it blue", MODEL_PARTS)
    contents = edit_sessions.request_contents(session, one, "add laces")
    first_user = edit_sessions.request_contents(session, None, "make it blue")[0]
    assert contents[0] == first_user
    # Every part, thoughts and unknown fields included, every signature unchanged, same order.
    assert contents[1] == {"role": "model", "parts": MODEL_PARTS}
    assert contents[2] == {"role": "user", "parts": [{"text": "add laces"}]}
    two = answered(session, one, "add laces", MODEL_PARTS)
    # A grandchild sends only its parent's exchange, not the whole history.
    grand = edit_sessions.request_contents(session, two, "shinier")
    assert grand[0] == {"role": "user", "parts": [{"text": "add laces"}]} and len(grand) == 3


def test_big_images_left_in_their_frame_are_stored_as_plain_text(session):
    data = base64.b64encode(b"x" * (BIG_STRING * 2)).decode()
    frame = orjson.dumps({"candidates": [{"index": 0, "content": {"role": "model", "parts": [
        {"inlineData": {"mimeType": "image/png", "data": data}, "thoughtSignature": "c2ln"}]}}]})
    result = NativeResult()
    result.add(parse_frame(frame))
    content = edit_sessions.model_content(result)
    assert content["parts"][0]["inlineData"]["data"] == data
    assert orjson.loads(orjson.dumps(content)) == content


def test_regenerate_is_a_sibling_and_branches_hang_from_any_turn(session):
    one = answered(session, None, "make it blue", MODEL_PARTS)
    parent, instruction = edit_sessions.regenerate_target(one)
    again = answered(session, parent, instruction, MODEL_PARTS)
    child = answered(session, one, "add laces", MODEL_PARTS)
    branch = answered(session, one, "remove laces", MODEL_PARTS)
    session.refresh_from_db()
    tree = edit_sessions.tree(session)
    assert tree["roots"] == [str(one.id), str(again.id)]
    assert tree["turns"][str(one.id)]["children"] == [str(child.id), str(branch.id)]
    node = tree["turns"][str(branch.id)]
    assert (node["sibling_index"], node["sibling_count"]) == (2, 2)
    assert node["parent_image"] == f"/assets/{one.output_id}/file"
    assert tree["turns"][str(one.id)]["parent_image"] == f"/assets/{session.source_id}/file"
    # The newest turn is the head; switching to a sibling lands on its newest leaf.
    assert tree["head"] == str(branch.id) and tree["path"] == [str(one.id), str(branch.id)]
    assert tree["turns"][str(again.id)]["leaves"][str(one.id)] == str(branch.id)


def test_the_head_is_remembered(session):
    one = answered(session, None, "make it blue", MODEL_PARTS)
    answered(session, one, "add laces", MODEL_PARTS)
    edit_sessions.set_head(session, one)
    reloaded = EditSession.objects.get(id=session.id)
    assert reloaded.head_id == one.id
    assert edit_sessions.tree(reloaded)["path"] == [str(one.id)]


def test_blocked_and_failed_turns_keep_their_reason_and_cannot_be_continued(session):
    turn = edit_sessions.start_turn(session, None, "x", MODEL, {"role": "user", "parts": [{"text": "x"}]})
    result = NativeResult()
    result.add({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}})
    blocked = edit_sessions.finish_turn(turn, content=None, result=result, output_id=None, generation_id=None, error=None)
    assert blocked.status == "blocked" and blocked.finish_reason == "PROHIBITED_CONTENT"
    assert blocked.error == {"prompt_feedback": {"blockReason": "PROHIBITED_CONTENT"}}
    with pytest.raises(BadRequest) as refused:
        edit_sessions.request_contents(session, blocked, "more")
    assert refused.value.param == "parent"
    turn = edit_sessions.start_turn(session, None, "y", MODEL, {"role": "user", "parts": [{"text": "y"}]})
    failed = edit_sessions.finish_turn(turn, content=None, result=NativeResult(), output_id=None, generation_id=None,
                                       error={"status": 400, "message": "Corrupted thought signature."})
    assert failed.status == "failed" and failed.error["status"] == 400


def test_instructions_are_checked(session):
    with pytest.raises(BadRequest) as empty:
        edit_sessions.clean_instruction("  ")
    assert empty.value.param == "instruction"
    with pytest.raises(BadRequest):
        edit_sessions.clean_instruction("x" * 10001)
    with pytest.raises(BadRequest) as other:
        edit_sessions.turn_in(session, "00000000-0000-0000-0000-000000000000", "parent")
    assert other.value.param == "parent"


def test_only_the_owner_and_team_members_see_a_session(session, alice, make_account):
    bob = make_account("bob")
    assert edit_sessions.session_for(alice.user, session.id).can_edit
    with pytest.raises(NotFound):
        edit_sessions.session_for(bob.user, session.id)
    team = Team.objects.create(name="Shoes", slug="shoes")
    Membership.objects.create(team=team, user=bob.user, role="viewer")
    session.team = team
    session.save()
    access = edit_sessions.session_for(bob.user, session.id)
    assert not access.can_edit
    assert list(edit_sessions.visible_sessions(bob.user)) == [session]
