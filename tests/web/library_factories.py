"""Builders for gallery, team and sharing tests: real stored images with their generations."""

from __future__ import annotations

import io
from datetime import timedelta

from django.utils import timezone
from PIL import Image

from studio.gateway.media.storage import store_bytes
from studio.models import Generation, GenerationStatus, Membership, Team

COLORS = ["red", "green", "blue", "orange", "purple", "teal"]


def png(color: str = "red", size: tuple[int, int] = (640, 480)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, "PNG")
    return out.getvalue()


def make_image(owner, prompt: str = "a red fox", *, team=None, model: str = "delta-3.1-flash-image",
               minutes_ago: int = 0, parent: Generation | None = None, usage: dict | None = None,
               data: bytes | None = None, **asset_fields):
    generation = Generation.objects.create(
        user=owner, team=team, model_id=model, route="native", prompt=prompt, status=GenerationStatus.SUCCEEDED,
        parameters={"aspect_ratio": "1:1"}, parent=parent,
        usage=usage if usage is not None else {"promptTokenCount": 10, "candidatesTokenCount": 1290,
                                               "totalTokenCount": 1300},
    )
    asset = store_bytes(data or png(COLORS[len(prompt) % len(COLORS)]), "image/png", owner_id=owner.id,
                        team_id=team.id if team else None, generation_id=generation.id)
    created = timezone.now() - timedelta(minutes=minutes_ago)
    fields = {"created": created, **asset_fields}
    type(asset).objects.filter(id=asset.id).update(**fields)
    asset.refresh_from_db()
    return asset


def make_team(owner, name: str = "Design", **members) -> Team:
    """``make_team(alice, bob="member", carol="viewer")`` with users passed as ``{role: user}`` pairs."""
    from django.utils.text import slugify

    team = Team.objects.create(name=name, slug=slugify(name))
    Membership.objects.create(team=team, user=owner, role="owner")
    for role_user in members.values():
        user, role = role_user
        Membership.objects.create(team=team, user=user, role=role)
    return team


def login(web, account) -> None:
    web.force_login(account.user)


def body_of(response) -> bytes:
    """All bytes of a streamed response (its chunks are produced asynchronously)."""
    import asyncio

    async def collect() -> bytes:
        return b"".join([chunk async for chunk in response.streaming_content])

    return asyncio.run(collect())
