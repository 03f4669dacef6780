"""Price rows as JSON and CSV: a round trip, adding rather than rewriting, and errors that name
the row and the field."""

from __future__ import annotations

from decimal import Decimal

import pytest

from studio.gateway import price_table
from studio.gateway.price_table import PriceFormatError

pytestmark = pytest.mark.django_db

ROWS = [
    {"model_id": "omicron-x", "effective_from": "2026-01-01T00:00:00+00:00", "input_per_million": "0.15",
     "output_per_million": "0.6", "cached_per_million": "0.075"},
    {"model_id": "sigma-x", "effective_from": "2026-01-01T00:00:00+00:00", "per_image": {"1K": "0.03", "*": "0.035"}},
    {"model_id": "alpha-x", "effective_from": "2026-01-01T00:00:00+00:00", "per_request": "0.01",
     "per_video_second": {"720p": "0.10", "720p+audio": "0.14"}},
]


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_export_then_import_round_trips(fmt):
    from studio.models import Price

    assert price_table.import_rows(ROWS) == (3, 0)
    exported = price_table.export_rows()
    data = price_table.dumps(exported, fmt)
    Price.objects.all().delete()
    assert price_table.import_rows(price_table.loads(data, fmt)) == (3, 0)
    assert price_table.export_rows() == exported
    omicron = Price.objects.get(model_id="omicron-x")
    assert (omicron.input_per_million, omicron.cached_per_million) == (Decimal("0.15"), Decimal("0.075"))


def test_importing_again_skips_what_is_already_there_and_adds_new_prices():
    price_table.import_rows(ROWS)
    newer = {**ROWS[0], "effective_from": "2026-06-01T00:00:00+00:00", "input_per_million": "0.2"}
    assert price_table.import_rows([*ROWS, newer]) == (1, 3)


def test_a_row_without_start_takes_effect_now():
    from studio.models import Price

    price_table.import_rows([{"model_id": "fresh", "input_per_million": "1"}])
    assert Price.objects.get(model_id="fresh").effective_from is not None


@pytest.mark.parametrize(("row", "message"), [
    ({"input_per_million": "1"}, "row 1: model_id is required"),
    ({"model_id": "m", "input_per_million": "cheap"}, "row 1: input_per_million: 'cheap' is not a number"),
    ({"model_id": "m", "output_per_million": "-1"}, "row 1: output_per_million: must be a non-negative amount"),
    ({"model_id": "m", "upstream": "nobody"}, "row 1: upstream: no upstream named 'nobody'"),
    ({"model_id": "m", "effective_from": "yesterday"}, "row 1: effective_from: not an ISO 8601 time"),
])
def test_bad_rows_name_the_row_and_field(row, message):
    with pytest.raises(PriceFormatError, match=message):
        price_table.import_rows([row])


def test_an_error_imports_nothing():
    from studio.models import Price

    with pytest.raises(PriceFormatError, match="row 2"):
        price_table.import_rows([ROWS[0], {"model_id": ""}])
    assert not Price.objects.exists()


def test_unreadable_files_are_refused():
    with pytest.raises(PriceFormatError, match="not valid JSON"):
        price_table.loads(b"{oops", "json")
    with pytest.raises(PriceFormatError, match="array"):
        price_table.loads(b"{}", "json")
    with pytest.raises(PriceFormatError, match="line 2: per_image"):
        price_table.loads(b"model_id,per_image\nm,{not json\n", "csv")
