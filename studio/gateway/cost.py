"""What a call cost: the upstream's reported usage times the price that was in effect.

``compute`` is pure (a price entry and a ``Usage`` in, US dollars out). Money is ``Decimal``;
the live budget counters count integer nano-dollars (``to_nano``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal

from studio.core.entries import PriceEntry

MILLION = Decimal(1_000_000)
NANO = Decimal("0.000000001")
ZERO = Decimal(0)


@dataclass(slots=True)
class Usage:
    """What one call used, as the upstream reported it (or, before the call, as estimated)."""

    input_tokens: int = 0  # every prompt token, cached ones included
    output_tokens: int = 0
    cached_tokens: int = 0  # of the input tokens, those read from the vendor's cache
    images: list[tuple[str, str]] = field(default_factory=list)  # (size, quality) per image made
    token_images: int = 0  # images made that the vendor bills as output tokens (priced by those)
    video_seconds: float = 0.0
    video_resolution: str = ""
    video_audio: bool = False
    requests: int = 1

    @property
    def image_count(self) -> int:
        """Every image made: those priced per image and those billed as tokens."""
        return len(self.images) + self.token_images


def image_price(price: PriceEntry, size: str, quality: str) -> Decimal | None:
    table = price.per_image
    for name in (f"{size}/{quality}", size, f"*/{quality}", "*"):
        if name in table:
            return table[name]
    return None


def video_second_price(price: PriceEntry, resolution: str, audio: bool) -> Decimal | None:
    table, res = price.per_video_second, resolution.lower()
    names = (f"{res}+audio", res, "*+audio", "*") if audio else (res, "*")
    for name in names:
        if name in table:
            return table[name]
    return None


def compute(price: PriceEntry | None, usage: Usage) -> Decimal:
    """US dollars for ``usage`` at ``price``; no price means no charge."""
    if price is None:
        return ZERO
    cached = min(max(usage.cached_tokens, 0), max(usage.input_tokens, 0))
    fresh = max(usage.input_tokens, 0) - cached
    cached_rate = price.cached_per_million if price.cached_per_million is not None else price.input_per_million
    total = (Decimal(fresh) * price.input_per_million + Decimal(cached) * cached_rate
             + Decimal(max(usage.output_tokens, 0)) * price.output_per_million) / MILLION
    for size, quality in usage.images:
        total += image_price(price, size, quality) or ZERO
    if usage.video_seconds > 0:
        rate = video_second_price(price, usage.video_resolution, usage.video_audio) or ZERO
        total += Decimal(str(round(usage.video_seconds, 3))) * rate
    total += price.per_request * usage.requests
    return total.quantize(NANO, rounding=ROUND_CEILING)


def to_nano(usd: Decimal) -> int:
    return int((usd / NANO).to_integral_value(rounding=ROUND_CEILING))


def from_nano(nano: int) -> Decimal:
    return (Decimal(nano) * NANO).quantize(NANO)


def display(usd: Decimal | int) -> str:
    """Decimal dollars without exponent or trailing zeros: ``0.00123``, ``0``."""
    text = f"{Decimal(usd).quantize(NANO):f}".rstrip("0").rstrip(".")
    return text or "0"
