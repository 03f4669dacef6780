"""What a batch of records wrote: the statements that changed rows, and the media files on disk."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from django.conf import settings

# A statement run for many rows is logged as "N times: INSERT ...".
_STATEMENT = re.compile(r"(?:\d+ times: )?(INSERT INTO|UPDATE) \W?(\w+)")


def writes(captured: list[dict]) -> list[str]:
    """``"INSERT table"`` / ``"UPDATE table"`` per statement of ``CaptureQueriesContext``'s queries, sorted."""
    found = [_STATEMENT.match(q["sql"]) for q in captured]
    return sorted(f"{m[1].split()[0]} {m[2]}" for m in found if m)


def media_files() -> set[Path]:
    return {p for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file()}


def one_statement_per_table() -> list[str]:
    """``writes`` of a batch of picture records: an INSERT each of generations, assets and usage
    rows, and an UPDATE of the keys' last use."""
    from studio.models import ApiKey, Asset, Generation, UsageRecord

    return sorted([*(f"INSERT {m._meta.db_table}" for m in (Generation, Asset, UsageRecord)),
                   f"UPDATE {ApiKey._meta.db_table}"])


def fails_without_a_trace(persist: Callable[[list], None], batch: list) -> None:
    """``persist(batch)`` of a batch whose last record names no real upstream (its rows break a
    foreign key) raises, and leaves no generation and no picture file behind."""
    from studio.models import Generation

    before = media_files()
    batch[-1].upstream_id = 999_999
    with pytest.raises(Exception):  # noqa: B017 - whatever the backend raises for it
        persist(batch)
    assert media_files() == before  # the pictures it had written are gone with it
    assert not Generation.objects.filter(id__in=[r.generation_id for r in batch]).exists()
