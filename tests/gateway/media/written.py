"""What a batch of records wrote: the statements that changed rows, and the media files on disk."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from django.conf import settings

# A statement run for many rows is logged as "N times: INSERT ...".
_STATEMENT = re.compile(r"(?:\d+ times: )?(INSERT INTO|UPDATE) \W?(\w+)")


def writes(captured: list[dict]) -> list[str]:
    """``"INSERT table"`` / ``"UPDATE table"`` per statement of ``CaptureQueriesContext``'s queries, sorted."""
    found = [_STATEMENT.match(q["sql"]) for q in captured]
    return sorted(f"{m[1].split()[0]} {m[2]}" for m in found if m)


def media_files() -> set[Path]:
    return {p for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file()}


def by_table(captured: list[dict]) -> list[str]:
    """``writes`` with each table named once: a batch's rows go in a few statements of a power of
    two of rows each (``row_writes.insert_rows``), so a batch of 3 is two statements a table."""
    return sorted(set(writes(captured)))


def one_statement_per_table() -> list[str]:
    """``writes`` of a batch of picture records whose size is a power of two: an INSERT each of
    generations, assets and usage rows, and an UPDATE of the keys' last use."""
    from studio.models import ApiKey, Asset, Generation, UsageRecord

    return sorted([*(f"INSERT {m._meta.db_table}" for m in (Generation, Asset, UsageRecord)),
                   f"UPDATE {ApiKey._meta.db_table}"])


def fails_without_a_trace(good: Any, broken: Any) -> None:
    """The recorder's write of a batch of ``good`` and ``broken``, whose value the database
    refuses as its statement runs: the batch fails and each record is tried alone. ``good`` is
    written with its one picture; ``broken`` comes back for a later try and leaves no generation
    and no picture file behind (neither try's)."""
    from studio.gateway import recording
    from studio.models import Generation

    before = media_files()
    broken.first_byte_ms = 2**64  # more than any database integer holds
    assert recording._persist_batch([good, broken]) == [broken]
    assert Generation.objects.filter(id=good.generation_id).count() == 1
    assert not Generation.objects.filter(id=broken.generation_id).exists()
    assert len(media_files() - before) == 1  # the good one's picture, once
