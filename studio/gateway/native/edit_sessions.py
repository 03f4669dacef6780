"""Multi-turn edit sessions: the tree of turns and the exact contents each turn replays.

A turn's request is built from its ancestry: the parent's user ``Content`` as it was sent, the
parent's complete model ``Content`` as it came back (every part, thoughts included, every
``thoughtSignature`` unchanged: image models refuse a replay that lost one), then the new
instruction. A root turn sends the session's source image with its instruction.

Regenerate makes a sibling (same parent, same instruction); branching makes a new child of any
answered turn; the head is the turn the user last looked at. Everything here is synchronous
(queries and file reads): async callers go through ``sync_to_async``.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass
from typing import Any

import orjson
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from studio.core.errors import BadRequest, NotFound
from studio.gateway.native.frames import LongString
from studio.gateway.native.result import NativeResult
from studio.models import Asset, Membership
from studio.models.accounts import Role
from studio.models.edits import EditSession, EditTurn, TurnStatus

MAX_INSTRUCTION = 10000
Content = dict[str, Any]


# --- contents -----------------------------------------------------------------------------------

def source_content(image: bytes, mime: str, instruction: str) -> Content:
    """The first user turn: the image to edit, then what to do with it."""
    return {"role": "user", "parts": [
        {"inlineData": {"mimeType": mime, "data": base64.b64encode(image).decode()}},
        {"text": instruction},
    ]}


def instruction_content(instruction: str) -> Content:
    return {"role": "user", "parts": [{"text": instruction}]}


def _plain(value: Any) -> Any:
    """JSON values with any image still inside its frame (a ``LongString``) turned into text."""
    if isinstance(value, LongString):
        return value.text()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def model_content(result: NativeResult) -> Content:
    """The model's answer as one Content: every part of candidate 0, in the order it arrived."""
    return {"role": "model", "parts": [_plain(part) for part in result.parts]}


def read_content(field) -> Content | None:
    if not field:
        return None
    with field.open("rb") as handle:
        return orjson.loads(handle.read())


def write_content(turn: EditTurn, name: str, content: Content) -> None:
    getattr(turn, name).save(f"{name}.json", ContentFile(orjson.dumps(content)), save=False)


def clean_instruction(raw: Any) -> str:
    text = str(raw or "").strip()
    if not text:
        raise BadRequest("Write what to change first.", param="instruction")
    if len(text) > MAX_INSTRUCTION:
        raise BadRequest(f"the instruction is too long ({len(text)} characters; at most {MAX_INSTRUCTION})",
                         param="instruction")
    return text


def request_contents(session: EditSession, parent: EditTurn | None, instruction: str) -> list[Content]:
    """What a new turn under ``parent`` sends (the root's parent is the source image)."""
    if parent is None:
        if session.source is None or not session.source.file:
            raise BadRequest("the session's source image is gone; start a new session", param="session")
        with session.source.file.open("rb") as handle:
            return [source_content(handle.read(), session.source.mime, instruction)]
    if parent.status != TurnStatus.SUCCEEDED or not parent.model_content:
        raise BadRequest("that turn has no image to continue from; regenerate it or pick another turn",
                         param="parent")
    previous_user = read_content(parent.user_content)
    previous_model = read_content(parent.model_content)
    if previous_user is None or previous_model is None:
        raise BadRequest("that turn's stored content is missing", param="parent")
    return [previous_user, previous_model, instruction_content(instruction)]


# --- who may see and change a session ----------------------------------------------------------

@dataclass(frozen=True, slots=True)
class SessionAccess:
    session: EditSession
    can_edit: bool


def session_for(user, session_id: uuid.UUID | str) -> SessionAccess:
    """The session when the user owns it or belongs to its team; unknown and forbidden look alike."""
    try:
        session = EditSession.objects.select_related("source", "head").get(id=uuid.UUID(str(session_id)))
    except (ValueError, EditSession.DoesNotExist):
        raise NotFound("no such edit session", param="session") from None
    if user.is_authenticated and session.owner_id == user.id:
        return SessionAccess(session, True)
    member = (Membership.objects.filter(team_id=session.team_id, user_id=user.id).first()
              if session.team_id and user.is_authenticated else None)
    if member is None:
        raise NotFound("no such edit session", param="session")
    return SessionAccess(session, member.has_role(Role.MEMBER))


def visible_sessions(user):
    teams = Membership.objects.filter(user=user).values("team_id")
    from django.db.models import Q

    return (EditSession.objects.filter(Q(owner=user) | Q(team_id__in=teams))
            .select_related("source", "head", "head__output", "team").order_by("-updated"))


def create_session(owner, source: Asset, model_id: str, *, team_id: int | None = None, title: str = "") -> EditSession:
    now = timezone.now()
    return EditSession.objects.create(owner=owner, team_id=team_id, source=source, model_id=model_id,
                                      title=title.strip()[:200], created=now, updated=now)


# --- the tree -----------------------------------------------------------------------------------

def turn_in(session: EditSession, turn_id: Any, param: str) -> EditTurn:
    try:
        return EditTurn.objects.get(session=session, id=uuid.UUID(str(turn_id)))
    except (ValueError, EditTurn.DoesNotExist):
        raise BadRequest(f"'{param}' is not a turn of this session", param=param) from None


def start_turn(session: EditSession, parent: EditTurn | None, instruction: str, model_id: str,
               user_content: Content, generation_id: uuid.UUID | None = None) -> EditTurn:
    """A running turn with the exact user Content it sends; it becomes the head."""
    turn = EditTurn(session=session, parent=parent, instruction=instruction, model_id=model_id,
                    generation_id=generation_id)
    write_content(turn, "user_content", user_content)
    with transaction.atomic():
        turn.save()
        EditSession.objects.filter(id=session.id).update(head=turn, updated=timezone.now())
    session.head = turn
    return turn


def regenerate_target(turn: EditTurn) -> tuple[EditTurn | None, str]:
    """A regenerate runs the same instruction again under the same parent: a new sibling."""
    return turn.parent, turn.instruction


def finish_turn(turn: EditTurn, *, content: Content | None, result: NativeResult | None,
                output_id: uuid.UUID | None, generation_id: uuid.UUID | None, error: dict[str, Any] | None) -> EditTurn:
    """Store what came back. No image means blocked (with the model's reason) or failed (with the error)."""
    if content is not None:
        write_content(turn, "model_content", content)
    turn.generation_id = generation_id
    turn.output_id = output_id
    if error:
        turn.status, turn.error = TurnStatus.FAILED, error
    elif output_id is None:
        turn.status = TurnStatus.BLOCKED
        turn.finish_reason = result.block_reason if result else "NO_IMAGE"
        if result and result.prompt_feedback:
            turn.error = {"prompt_feedback": result.prompt_feedback}
    else:
        turn.status, turn.finish_reason = TurnStatus.SUCCEEDED, result.finish_reason if result else ""
    turn.text = result.text[:20000] if result else ""
    turn.save()
    EditSession.objects.filter(id=turn.session_id).update(updated=timezone.now())
    return turn


def set_head(session: EditSession, turn: EditTurn | None) -> None:
    session.head = turn
    EditSession.objects.filter(id=session.id).update(head=turn)


def ancestry(turn: EditTurn | None, by_id: dict[uuid.UUID, EditTurn]) -> list[EditTurn]:
    """Root first, ``turn`` last."""
    path: list[EditTurn] = []
    while turn is not None:
        path.append(turn)
        turn = by_id.get(turn.parent_id) if turn.parent_id else None
    return path[::-1]


def latest_leaf(turn: EditTurn, children: dict[uuid.UUID | None, list[EditTurn]]) -> EditTurn:
    """Following the newest child down: where switching to a sibling lands."""
    while children.get(turn.id):
        turn = children[turn.id][-1]
    return turn


def tree(session: EditSession) -> dict[str, Any]:
    """The whole session for the page: every turn with its place among its siblings, and the
    path from the source to the head."""
    from django.urls import reverse

    turns = list(EditTurn.objects.filter(session=session).select_related("output").order_by("created"))
    by_id = {t.id: t for t in turns}
    children: dict[uuid.UUID | None, list[EditTurn]] = {}
    for turn in turns:
        children.setdefault(turn.parent_id, []).append(turn)
    head = by_id.get(session.head_id) if session.head_id else None

    def url(asset_id: uuid.UUID | None) -> str | None:
        return reverse("asset-file", args=[asset_id]) if asset_id else None

    def node(turn: EditTurn) -> dict[str, Any]:
        siblings = children[turn.parent_id]
        parent = by_id.get(turn.parent_id) if turn.parent_id else None
        return {
            "id": str(turn.id), "parent": str(turn.parent_id) if turn.parent_id else None,
            "instruction": turn.instruction, "model": turn.model_id, "status": turn.status,
            "text": turn.text, "finish_reason": turn.finish_reason, "error": turn.error,
            "image": url(turn.output_id), "asset": str(turn.output_id) if turn.output_id else None,
            "width": turn.output.width if turn.output else None, "height": turn.output.height if turn.output else None,
            "parent_image": url(parent.output_id) if parent else url(session.source_id),
            "job": str(turn.generation_id) if turn.generation_id else None,
            "sibling_index": siblings.index(turn) + 1, "sibling_count": len(siblings),
            "siblings": [str(s.id) for s in siblings],
            "leaves": {str(s.id): str(latest_leaf(s, children).id) for s in siblings},
            "children": [str(c.id) for c in children.get(turn.id, [])],
            "created": turn.created.isoformat(),
        }

    return {
        "id": str(session.id), "title": str(session), "model": session.model_id,
        "source": {"image": url(session.source_id), "asset": str(session.source_id) if session.source_id else None},
        "head": str(head.id) if head else None,
        "path": [str(t.id) for t in ancestry(head, by_id)],
        "roots": [str(t.id) for t in children.get(None, [])],
        "turns": {str(t.id): node(t) for t in turns},
    }
