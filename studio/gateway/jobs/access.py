"""Who may follow a job, and where a user may save one (sync; called through database_sync_to_async).

A job is seen by its owner and, when it was made for a team, by that team's members; unknown and
forbidden jobs look alike. Saving into a team takes at least the member role (viewers only see).
"""

from __future__ import annotations

from typing import Any

from studio.core.errors import BadRequest


def stored_events(user_id: int, generation_id: str) -> list[dict[str, Any]] | None:
    """The stored events of a job the user may see, or None (the studio's one permission check)."""
    from studio.gateway.permissions import can_see_generation

    return can_see_generation(user_id, generation_id)


def team_for_saving(user_id: int, raw: Any) -> int | None:
    """The team a job is saved into (None: personal); refuses teams the user cannot add to."""
    if raw in (None, "", 0, "0"):
        return None
    from studio.models import Membership
    from studio.models.accounts import Role

    try:
        team_id = int(raw)
    except (TypeError, ValueError):
        raise BadRequest("'team' must be a team id", param="team") from None
    membership = Membership.objects.filter(team_id=team_id, user_id=user_id).first()
    if membership is None or not membership.has_role(Role.MEMBER):
        raise BadRequest("you cannot add images to that team", param="team")
    return team_id


def remember_prompt(user_id: int, text: str) -> None:
    """Add the prompt to the user's history in the prompt library."""
    from studio.gateway.prompt_library import remember

    remember(user_id, text)
