"""Price rows as JSON or CSV, for ``manage.py prices export|import`` and the seed.

One row per price: ``model_id``, ``upstream`` (an upstream's name, or empty), ``effective_from``
(ISO 8601; empty on import: now), the token prices per million (``input_per_million``,
``output_per_million``, ``cached_per_million``), ``per_request``, and the tables ``per_image`` and
``per_video_second`` (objects in JSON; JSON text in a CSV cell). Importing adds rows: a changed
price is a new effective-from row, and the cost stored on past records does not change. A row
identical to one already stored (same model, upstream and start) is skipped.
"""

from __future__ import annotations

import csv
import io
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson
from django.utils import timezone
from django.utils.dateparse import parse_datetime

FIELDS = ["model_id", "upstream", "effective_from", "input_per_million", "output_per_million",
          "cached_per_million", "per_request", "per_image", "per_video_second", "note"]
MONEY_FIELDS = ("input_per_million", "output_per_million", "cached_per_million", "per_request")


class PriceFormatError(ValueError):
    pass


def _plain(value: Decimal | None) -> str | None:
    return None if value is None else f"{value.normalize():f}"


def export_rows() -> list[dict[str, Any]]:
    from studio.models import Price

    rows = []
    for p in Price.objects.select_related("upstream").order_by("model_id", "effective_from", "id"):
        rows.append({
            "model_id": p.model_id, "upstream": p.upstream.name if p.upstream_id else "",
            "effective_from": p.effective_from.isoformat(), "input_per_million": _plain(p.input_per_million),
            "output_per_million": _plain(p.output_per_million), "cached_per_million": _plain(p.cached_per_million),
            "per_request": _plain(p.per_request), "per_image": p.per_image or {},
            "per_video_second": p.per_video_second or {}, "note": p.note,
        })
    return rows


def dumps(rows: list[dict[str, Any]], fmt: str) -> bytes:
    if fmt == "json":
        return orjson.dumps(rows, option=orjson.OPT_INDENT_2)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=FIELDS)
    writer.writeheader()
    for row in rows:
        writer.writerow({**row, "per_image": orjson.dumps(row["per_image"]).decode(),
                         "per_video_second": orjson.dumps(row["per_video_second"]).decode(),
                         "cached_per_million": row["cached_per_million"] or ""})
    return out.getvalue().encode()


def loads(data: bytes, fmt: str) -> list[dict[str, Any]]:
    if fmt == "json":
        try:
            rows = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise PriceFormatError(f"not valid JSON: {exc}") from exc
        if not isinstance(rows, list):
            raise PriceFormatError("the JSON must be an array of price rows")
        return rows
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))
    for number, row in enumerate(rows, start=2):
        for name in ("per_image", "per_video_second"):
            cell = (row.get(name) or "").strip()
            try:
                row[name] = orjson.loads(cell) if cell else {}
            except orjson.JSONDecodeError as exc:
                raise PriceFormatError(f"line {number}: {name}: not a JSON object") from exc
    return rows


def _money(row: dict[str, Any], name: str, where: str, *, optional: bool = False) -> Decimal | None:
    value = row.get(name)
    if value in (None, ""):
        return None if optional else Decimal(0)
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        raise PriceFormatError(f"{where}: {name}: {value!r} is not a number") from None
    if amount < 0 or not amount.is_finite():
        raise PriceFormatError(f"{where}: {name}: must be a non-negative amount")
    return amount


def import_rows(rows: list[dict[str, Any]]) -> tuple[int, int]:
    """Add the rows (all or none); returns (added, skipped as already present)."""
    from django.core.exceptions import ValidationError
    from django.db import transaction

    from studio.models import Price, Upstream

    added = skipped = 0
    with transaction.atomic():
        for number, row in enumerate(rows, start=1):
            where = f"row {number}"
            if not isinstance(row, dict) or not str(row.get("model_id") or "").strip():
                raise PriceFormatError(f"{where}: model_id is required")
            upstream = None
            if row.get("upstream"):
                upstream = Upstream.objects.filter(name=row["upstream"]).first()
                if upstream is None:
                    raise PriceFormatError(f"{where}: upstream: no upstream named {row['upstream']!r}")
            start: datetime | None = timezone.now()
            if row.get("effective_from"):
                start = parse_datetime(str(row["effective_from"]))
                if start is None:
                    raise PriceFormatError(f"{where}: effective_from: not an ISO 8601 time")
                if timezone.is_naive(start):
                    start = timezone.make_aware(start)
            price = Price(model_id=str(row["model_id"]).strip(), upstream=upstream, effective_from=start,
                          input_per_million=_money(row, "input_per_million", where),
                          output_per_million=_money(row, "output_per_million", where),
                          cached_per_million=_money(row, "cached_per_million", where, optional=True),
                          per_request=_money(row, "per_request", where),
                          per_image=row.get("per_image") or {}, per_video_second=row.get("per_video_second") or {},
                          note=str(row.get("note") or "")[:200])
            try:
                price.clean()
            except ValidationError as exc:
                raise PriceFormatError(f"{where}: {'; '.join(exc.messages)}") from None
            if Price.objects.filter(model_id=price.model_id, upstream=upstream, effective_from=start).exists():
                skipped += 1
                continue
            price.save()
            added += 1
    return added, skipped
