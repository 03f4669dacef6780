"""What a call cost: the upstream's reported usage times the price that was in effect.

``compute`` is pure (a price entry and a ``Usage`` in, US dollars out). Money is ``Decimal``;
the live budget counters count integer nano-dollars (``to_nano``). ``compute_nano`` is the same
cost in whole nano-dollars (rounded up), worked out in integers where the price allows it: rates
of whole nano-dollars (per million tokens, per image, per request), which every price of up to
nine decimal places is. Admission and settlement use it: they need nano-dollars, and the
``Decimal`` arithmetic of a call's estimate and its charge was about a sixth of their own cost.
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


def image_names(size: str, quality: str) -> tuple[str, ...]:
    """The per-image price names that apply to one image, the most specific first."""
    return f"{size}/{quality}", size, f"*/{quality}", "*"


def image_price(price: PriceEntry, size: str, quality: str) -> Decimal | None:
    table = price.per_image
    for name in image_names(size, quality):
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
    nano = _integer_nano(price, usage)
    return _decimal_cost(price, usage) if nano is None else from_nano(nano)


def compute_float(price: PriceEntry | None, usage: Usage) -> float:
    """``float(compute(price, usage))``, without a ``Decimal`` where the price allows it (a
    stream's final usage event carries its cost as a JSON number). Whole nano-dollars divided in
    floating point are rounded once, as the ``Decimal``'s conversion rounds them."""
    if price is None:
        return 0.0
    nano = _integer_nano(price, usage)
    return float(_decimal_cost(price, usage)) if nano is None else nano / 1_000_000_000


def compute_nano(price: PriceEntry | None, usage: Usage) -> int:
    """``to_nano(compute(price, usage))``, in integers where the price allows it."""
    if price is None:
        return 0
    nano = _integer_nano(price, usage)
    return to_nano(_decimal_cost(price, usage)) if nano is None else nano


@dataclass(frozen=True, slots=True)
class _Rates:
    """A price's rates in whole nano-dollars (tokens: per million); None where one is not whole."""

    fresh: int
    cached: int
    output: int
    request: int
    images: dict[str, int] | None


def _whole_nano(usd: Decimal) -> int | None:
    nano = usd.scaleb(9)
    whole = int(nano)
    return whole if whole == nano else None


def _rates_of(price: PriceEntry) -> _Rates | None:
    cached = price.cached_per_million if price.cached_per_million is not None else price.input_per_million
    found = [_whole_nano(r) for r in (price.input_per_million, cached, price.output_per_million, price.per_request)]
    if None in found:
        return None
    images: dict[str, int] | None = {}
    for name, usd in price.per_image.items():
        nano = _whole_nano(usd)
        if nano is None:
            images = None
            break
        images[name] = nano
    fresh, cached_rate, output, request = found
    return _Rates(fresh, cached_rate, output, request, images)


# Each price entry's rates, by identity (entries are made once per snapshot, and the one kept
# here is compared, so an id reused by a later entry is never taken for it).
_RATES: dict[int, tuple[PriceEntry, _Rates | None]] = {}


def _integer_nano(price: PriceEntry, usage: Usage) -> int | None:
    """The cost in nano-dollars rounded up, or None when it needs ``Decimal`` (a rate finer than a
    nano-dollar, or video seconds)."""
    found = _RATES.get(id(price))
    if found is None or found[0] is not price:
        if len(_RATES) >= 4096:
            _RATES.clear()
        found = _RATES[id(price)] = (price, _rates_of(price))
    rates = found[1]
    if rates is None or usage.video_seconds > 0:
        return None
    inputs = usage.input_tokens if usage.input_tokens > 0 else 0
    cached = usage.cached_tokens if usage.cached_tokens > 0 else 0
    if cached > inputs:
        cached = inputs
    output = usage.output_tokens if usage.output_tokens > 0 else 0
    per_million = (inputs - cached) * rates.fresh + cached * rates.cached + output * rates.output
    whole = rates.request * usage.requests
    if usage.images:
        table = rates.images
        if table is None:
            return None
        for size, quality in usage.images:
            for name in image_names(size, quality):
                if name in table:
                    whole += table[name]
                    break
    return -(-(per_million + whole * 1_000_000) // 1_000_000)


def _decimal_cost(price: PriceEntry, usage: Usage) -> Decimal:
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
    return Decimal(nano).scaleb(-9)  # exponent -9, as ``quantize(NANO)`` leaves it


def display(usd: Decimal | int) -> str:
    """Decimal dollars without exponent or trailing zeros: ``0.00123``, ``0``."""
    text = f"{Decimal(usd).quantize(NANO):f}".rstrip("0").rstrip(".")
    return text or "0"
