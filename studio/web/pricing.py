"""An estimated cost for a generation, shown in the gallery's detail view.

The estimate is token based: input and output tokens of the recorded usage times the model's
per-million-token prices. Prices are catalog data: a model's ``capabilities["price"]``
(``{"input_per_million": USD, "output_per_million": USD}``) wins; otherwise the default for the
model's kind below applies. It is an estimate for the studio's users, not a bill.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

# USD per million tokens, by platform model kind, when the catalog row names no price.
DEFAULT_PRICES: dict[str, dict[str, str]] = {
    "native-image": {"input_per_million": "0.30", "output_per_million": "30.00"},
    "image": {"input_per_million": "5.00", "output_per_million": "40.00"},
    "video": {"input_per_million": "1.00", "output_per_million": "7.00"},
    "text": {"input_per_million": "0.50", "output_per_million": "2.00"},
}
MILLION = Decimal(1_000_000)


@dataclass(frozen=True)
class Cost:
    input_tokens: int
    output_tokens: int
    usd: Decimal
    source: str  # "catalog" or "default"

    @property
    def display(self) -> str:
        return f"${self.usd:.4f}"


def token_counts(usage: dict[str, Any]) -> tuple[int, int]:
    """(input, output) tokens from a usage record in either wire shape (Gemini or OpenAI)."""
    if not isinstance(usage, dict):
        return 0, 0
    if "promptTokenCount" in usage or "totalTokenCount" in usage:
        prompt = int(usage.get("promptTokenCount") or 0)
        total = int(usage.get("totalTokenCount") or 0)
        return prompt, max(total - prompt, int(usage.get("candidatesTokenCount") or 0))
    prompt = int(usage.get("input_tokens") or usage.get("prompt_tokens") or 0)
    output = int(usage.get("output_tokens") or usage.get("completion_tokens") or 0)
    return prompt, output


def estimate(usage: dict[str, Any], kind: str, capabilities: dict[str, Any] | None) -> Cost | None:
    prompt, output = token_counts(usage)
    if not prompt and not output:
        return None
    listed = (capabilities or {}).get("price")
    prices, source = (listed, "catalog") if isinstance(listed, dict) else (DEFAULT_PRICES.get(kind), "default")
    if not prices:
        return None
    usd = (Decimal(prompt) * Decimal(str(prices.get("input_per_million", 0)))
           + Decimal(output) * Decimal(str(prices.get("output_per_million", 0)))) / MILLION
    return Cost(prompt, output, usd, source)
