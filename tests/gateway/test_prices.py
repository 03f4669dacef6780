"""Finding the price in effect, and the studio's quotes and catalog lines."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from studio.core.entries import PriceEntry
from studio.gateway import prices
from studio.gateway.prices import find


def price(**kw) -> PriceEntry:
    return PriceEntry(model_id="m", upstream_id=kw.pop("upstream_id", None), effective_from=kw.pop("at", 0.0), **kw)


def test_price_in_effect_at_the_time_and_upstream_override():
    old = price(input_per_million=Decimal("1"), at=100.0)
    new = price(input_per_million=Decimal("2"), at=200.0)
    special = price(input_per_million=Decimal("5"), at=150.0, upstream_id=7)
    rows = (new, special, old)  # newest first
    assert find(rows, None, 150.0) is old
    assert find(rows, None, 250.0) is new
    assert find(rows, 7, 160.0) is special
    assert find(rows, 8, 160.0) is old
    assert find(rows, None, 50.0) is None


def test_catalog_lines_describe_every_part_of_a_price():
    lines = prices.summary(price(input_per_million=Decimal("0.15"), output_per_million=Decimal("0.6"),
                                 cached_per_million=Decimal("0.075"), per_request=Decimal("0.001"),
                                 per_image={"1K": Decimal("0.03")}, per_video_second={"720p": Decimal("0.1")}))
    assert lines == ["$0.15 / $0.6 per 1M tokens in/out", "$0.075 per 1M cached tokens", "$0.03 per image (1K)",
                     "$0.1 per video second (720p)", "$0.001 per request"]
    assert prices.summary(price()) == []


@pytest.mark.django_db
def test_quote_uses_todays_price_and_none_without_one():
    from django.utils import timezone

    from studio.models import Price

    Price.objects.create(model_id="kappa-x", effective_from=timezone.now() - timedelta(days=2),
                         per_image={"1024x1024/high": "0.2", "*": "0.05"})
    Price.objects.create(model_id="kappa-x", effective_from=timezone.now() - timedelta(days=1),
                         per_image={"1024x1024/high": "0.167", "*": "0.042"})
    Price.objects.create(model_id="kappa-x", effective_from=timezone.now() + timedelta(days=1),
                         per_image={"*": "9"})  # not in effect yet
    assert prices.quote("kappa-x", images=2, size="1024x1024", quality="high") == Decimal("0.334")
    assert prices.quote("kappa-x", images=1, size="512x512") == Decimal("0.042")
    assert prices.quote("unpriced-model", input_tokens=10) is None
    entry = prices.current("kappa-x")
    assert entry is not None and entry.per_image["*"] == Decimal("0.042")


def test_a_generations_cost_is_what_was_recorded():
    class Stored:
        cost_usd = Decimal("0.5")

    class Unpriced:
        cost_usd = None

    assert prices.cost_of_generation(Stored()) == Decimal("0.5")
    assert prices.cost_of_generation(Unpriced()) == 0
