"""Writing the records of calls that make pictures (native and images API) a batch at a time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.db import transaction

from studio.core.principal import Principal
from studio.gateway import row_writes
from studio.gateway.media.storage import discard_files
from studio.models import Asset, Generation, UsageRecord


@dataclass(slots=True)
class Rows:
    """What a batch inserts: generation and usage rows (values by field) and picture assets."""

    generations: list[dict[str, Any]] = field(default_factory=list)
    pictures: list[Asset] = field(default_factory=list)  # their files written already
    usage: list[dict[str, Any]] = field(default_factory=list)


class PictureRecord(Protocol):
    principal: Principal

    def gather(self, rows: Rows) -> None:
        """Add this record's rows (writing its pictures' files, updating a generation a studio job made)."""

    def release(self) -> None:
        """Let go of the media held until written for good."""


def persist(records: Sequence[PictureRecord]) -> None:
    """The batch in one transaction of a few statements: one INSERT each for the new generations,
    their pictures and their usage rows, one UPDATE of the keys' last use. A picture's file is
    written before its row; when a statement of the batch fails, the files it wrote are removed
    again (the recorder then writes its records one at a time) and the records keep their media
    for the next try. A failure only at the commit of the recorder's transaction (a foreign key,
    checked then) leaves the files, as a write per record did."""
    rows = Rows()
    try:
        with transaction.atomic():
            for record in records:
                record.gather(rows)
            row_writes.insert_rows(Generation, rows.generations)
            row_writes.insert_objects(rows.pictures)
            row_writes.insert_rows(UsageRecord, rows.usage)
            row_writes.touch_keys({r.principal.key_id for r in records if r.principal.key_id is not None})
            for record in records:
                transaction.on_commit(record.release)
    except Exception:
        discard_files(rows.pictures)
        raise
