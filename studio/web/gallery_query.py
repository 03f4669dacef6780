"""The gallery's query: filters from the URL, keyset pagination on (created, id), tile rows.

Keyset pagination keeps page N as cheap as page 1 (no OFFSET scan) and never skips or repeats
an item when new ones arrive while the user scrolls. A page costs one query whatever its size.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db.models import Q, QuerySet
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from studio.gateway import permissions as access
from studio.models import Asset, AssetKind

PAGE_SIZE = 60
MAX_PAGE_SIZE = 200


class BadFilter(ValueError):
    """A filter value the gallery cannot use; the message names the field."""


@dataclass
class GalleryFilters:
    q: str = ""
    model: str = ""
    kind: str = ""
    team: int | None = None
    collection: int | None = None
    since: date | None = None
    until: date | None = None
    starred: bool = False
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_query(cls, params) -> GalleryFilters:
        kind = params.get("kind", "").strip()
        if kind and kind not in AssetKind.values:
            raise BadFilter(f"kind must be one of {', '.join(AssetKind.values)}")
        return cls(
            q=params.get("q", "").strip()[:300],
            model=params.get("model", "").strip()[:120],
            kind=kind,
            team=_int(params, "team"),
            collection=_int(params, "collection"),
            since=_date(params, "since"),
            until=_date(params, "until"),
            starred=params.get("starred", "") in ("1", "true", "on"),
        )

    def as_params(self) -> dict[str, str]:
        """The active filters, to carry into the next-page URL."""
        values = {
            "q": self.q, "model": self.model, "kind": self.kind,
            "team": str(self.team or ""), "collection": str(self.collection or ""),
            "since": self.since.isoformat() if self.since else "",
            "until": self.until.isoformat() if self.until else "",
            "starred": "1" if self.starred else "",
        }
        return {k: v for k, v in values.items() if v}

    def apply(self, assets: QuerySet[Asset]) -> QuerySet[Asset]:
        if self.q:
            assets = assets.filter(generation__prompt__icontains=self.q)
        if self.model:
            assets = assets.filter(generation__model_id=self.model)
        if self.kind:
            assets = assets.filter(kind=self.kind)
        if self.team:
            assets = assets.filter(team_id=self.team, visibility__in=access.SHARED_WITH_TEAM)
        if self.collection:
            assets = assets.filter(collection_id=self.collection)
        if self.since:
            assets = assets.filter(created__gte=_day_start(self.since))
        if self.until:
            assets = assets.filter(created__lt=_day_start(self.until + timedelta(days=1)))
        if self.starred:
            assets = assets.filter(starred=True)
        return assets


def _int(params, name: str) -> int | None:
    raw = params.get(name, "").strip()
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise BadFilter(f"{name} must be a number") from None


def _date(params, name: str) -> date | None:
    raw = params.get(name, "").strip()
    if not raw:
        return None
    parsed = parse_date(raw)
    if parsed is None:
        raise BadFilter(f"{name} must be a date (YYYY-MM-DD)")
    return parsed


def _day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


# --- cursor -------------------------------------------------------------------------------------

def encode_cursor(asset: Asset) -> str:
    raw = f"{asset.created.isoformat()}|{asset.id.hex}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        created_text, id_hex = raw.split("|", 1)
        created = parse_datetime(created_text)
        if created is None:
            raise ValueError
        return created, uuid.UUID(hex=id_hex)
    except (ValueError, UnicodeDecodeError):
        raise BadFilter("cursor is not a cursor this gallery gave out") from None


def gallery_assets(user, roles: dict[int, str], filters: GalleryFilters) -> QuerySet[Asset]:
    assets = access.visible_assets(user, roles).filter(is_input=False, is_draft=False)
    return filters.apply(assets).select_related("generation").order_by("-created", "-id")


def page_of(assets: QuerySet[Asset], cursor: str | None, size: int = PAGE_SIZE) -> tuple[list[Asset], str | None]:
    """One page after ``cursor`` and the cursor of the page after it (None at the end)."""
    if cursor:
        created, asset_id = decode_cursor(cursor)
        assets = assets.filter(Q(created__lt=created) | Q(created=created, id__lt=asset_id))
    rows = list(assets[: size + 1])
    more = len(rows) > size
    rows = rows[:size]
    return rows, encode_cursor(rows[-1]) if more and rows else None


def tile(asset: Asset, user, roles: dict[int, str]) -> dict[str, Any]:
    """What the grid needs for one asset (no extra query: the generation is joined)."""
    generation = asset.generation
    return {
        "id": str(asset.id),
        "kind": asset.kind,
        "detail_url": reverse("asset-detail", args=[asset.id]),
        "thumb_url": reverse("asset-thumb", args=[asset.id]),
        "file_url": reverse("asset-file", args=[asset.id]),
        "prompt": generation.prompt[:500] if generation else "",
        "model": generation.model_id if generation else "",
        "width": asset.width, "height": asset.height,
        "starred": asset.starred,
        "visibility": asset.visibility,
        "team_id": asset.team_id,
        "mine": asset.owner_id == user.id,
        "can_curate": access.can_curate(user, asset, roles),
        "can_manage": access.can_manage(user, asset, roles),
        "created": asset.created.isoformat(),
    }
