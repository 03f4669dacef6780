"""A model's price as the studio's pages show it: the one small function they read prices from.

Prices come from the spend feature's price table (``studio.gateway.prices``): the row in effect
today, as numbers the browser can multiply with a job's usage, plus the catalog's summary lines.
"""

from __future__ import annotations

from typing import Any

from studio.gateway import prices


def price_sheet(model_id: str) -> dict[str, Any] | None:
    """{input_per_million, output_per_million, per_image, per_request, lines} or None (no price)."""
    price = prices.current(model_id)
    if price is None:
        return None
    return {
        "input_per_million": float(price.input_per_million), "output_per_million": float(price.output_per_million),
        "per_image": {name: float(usd) for name, usd in price.per_image.items()},
        "per_request": float(price.per_request), "lines": prices.summary(price),
    }
