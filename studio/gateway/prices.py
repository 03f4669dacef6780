"""Finding the price in effect, and quoting prices for the studio.

The /v1 hot path reads prices from the snapshot (``find``). The studio's pages use ``quote``
("what would model X cost with these options") and ``cost_of_generation`` ("what did this
job cost"); both read the database and are for page views, not the hot path.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from studio.core.entries import PriceEntry
from studio.gateway.cost import Usage, compute


def find(rows: Iterable[PriceEntry], upstream_id: int | None, at: float) -> PriceEntry | None:
    """The price of one model at epoch ``at``: the upstream's own row if it has one in effect,
    else the model's general row. ``rows`` are newest first."""
    general = None
    for row in rows:
        if row.effective_from > at:
            continue
        if upstream_id is not None and row.upstream_id == upstream_id:
            return row
        if row.upstream_id is None and general is None:
            general = row
            if upstream_id is None:
                break
    return general


def _money(value: Any) -> Decimal:
    return Decimal(str(value))


def entry_from_row(row: Any) -> PriceEntry:
    """A ``studio.models.Price`` row as the engine's plain value."""
    return PriceEntry(
        model_id=row.model_id, upstream_id=row.upstream_id, effective_from=row.effective_from.timestamp(),
        input_per_million=row.input_per_million, output_per_million=row.output_per_million,
        cached_per_million=row.cached_per_million, per_request=row.per_request,
        per_image={str(k): _money(v) for k, v in (row.per_image or {}).items()},
        per_video_second={str(k).lower(): _money(v) for k, v in (row.per_video_second or {}).items()},
    )


def load_all() -> dict[str, tuple[PriceEntry, ...]]:
    """Every price row by model id, newest first (sync; one query)."""
    from studio.models import Price

    table: dict[str, list[PriceEntry]] = {}
    for row in Price.objects.order_by("model_id", "-effective_from", "-id"):
        table.setdefault(row.model_id, []).append(entry_from_row(row))
    return {model_id: tuple(rows) for model_id, rows in table.items()}


def current(model_id: str, upstream_id: int | None = None, at: float | None = None) -> PriceEntry | None:
    """The price row in effect now (or at ``at``) for a model (sync; one query)."""
    import time

    from studio.models import Price

    rows = [entry_from_row(r) for r in Price.objects.filter(model_id=model_id).order_by("-effective_from", "-id")]
    return find(rows, upstream_id, time.time() if at is None else at)


def quote(model_id: str, *, input_tokens: int = 0, output_tokens: int = 0, images: int = 0, size: str = "",
          quality: str = "", video_seconds: float = 0.0, resolution: str = "", audio: bool = False,
          upstream_id: int | None = None) -> Decimal | None:
    """The price in US dollars of one call of ``model_id`` with these options, at today's price;
    ``None`` when the model has no price. Sync (reads the database): for studio pages.

    >>> quote("kappa-image-1", images=2, size="1024x1024", quality="high")  # doctest: +SKIP
    Decimal('0.334000000')
    """
    price = current(model_id, upstream_id)
    if price is None:
        return None
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens, images=[(size, quality)] * images,
                  video_seconds=video_seconds, video_resolution=resolution, video_audio=audio)
    return compute(price, usage)


def cost_of_generation(generation: Any) -> Decimal:
    """What a stored generation (``Generation`` or ``VideoTask``) cost: the amount recorded when
    it finished, at the price in effect then. Later price changes never alter it."""
    return Decimal(generation.cost_usd or 0)


def summary(price: PriceEntry) -> list[str]:
    """Short lines describing a price, for the model catalog."""
    from studio.gateway.cost import display

    lines = []
    if price.input_per_million or price.output_per_million:
        lines.append(f"${display(price.input_per_million)} / ${display(price.output_per_million)} per 1M tokens in/out")
    if price.cached_per_million is not None:
        lines.append(f"${display(price.cached_per_million)} per 1M cached tokens")
    lines += [f"${display(usd)} per image ({name})" for name, usd in price.per_image.items()]
    lines += [f"${display(usd)} per video second ({name})" for name, usd in price.per_video_second.items()]
    if price.per_request:
        lines.append(f"${display(price.per_request)} per request")
    return lines
