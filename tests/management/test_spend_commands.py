"""``manage.py prices export|import`` and ``issue_key`` with limits and a budget."""

from __future__ import annotations

import io
from decimal import Decimal

import orjson
import pytest
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db(transaction=True)


def test_seeded_prices_round_trip_through_json_and_csv(catalog, tmp_path):
    from studio.models import Price

    seeded = Price.objects.count()
    assert seeded >= 20 and Price.objects.filter(model_id="kappa-image-1").exists()
    for name in ("prices.json", "prices.csv"):
        path = tmp_path / name
        call_command("prices", "export", str(path), stderr=io.StringIO())
        out = io.StringIO()
        call_command("prices", "import", str(path), stdout=out)
        assert f"Imported 0 prices ({seeded} already present)" in out.getvalue()
    rows = orjson.loads((tmp_path / "prices.json").read_bytes())
    kappa = next(r for r in rows if r["model_id"] == "kappa-image-1")
    assert kappa["per_image"]["1024x1024/high"] == "0.167"


def test_import_adds_a_later_price_and_rejects_bad_rows_naming_the_field(catalog, tmp_path):
    from studio.gateway import prices
    from studio.models import Price

    path = tmp_path / "new.csv"
    path.write_text("model_id,effective_from,input_per_million,output_per_million\n"
                    "omicron-4-mini,2030-01-01T00:00:00Z,1,2\n")
    call_command("prices", "import", str(path), stdout=io.StringIO())
    assert Price.objects.filter(model_id="omicron-4-mini").count() == 2
    assert prices.current("omicron-4-mini").input_per_million == Decimal("0.15")  # not in effect yet
    bad = tmp_path / "bad.json"
    bad.write_text('[{"model_id": "x", "output_per_million": "-1"}]')
    with pytest.raises(CommandError, match="output_per_million"):
        call_command("prices", "import", str(bad))


def test_issue_key_with_limits_and_budget(catalog, django_user_model):
    from studio.models import ApiKey, Budget, RateLimit

    django_user_model.objects.create_user(username="bob", password="pw-bob-123")
    out = io.StringIO()
    call_command("issue_key", "bob", "--rpm", "60", "--tpm", "10000", "--budget-usd", "12.5",
                 "--budget-period", "week", stdout=out, stderr=io.StringIO())
    key = ApiKey.objects.get(owner__username="bob")
    limit = RateLimit.objects.get(api_key=key)
    assert (limit.rpm, limit.tpm, limit.ipm) == (60, 10000, None)
    budget = Budget.objects.get(api_key=key)
    assert budget.limit_usd == Decimal("12.5") and budget.period == "week"
    assert out.getvalue().strip().startswith("sgw-")
    with pytest.raises(CommandError, match="--rpm"):
        call_command("issue_key", "bob", "--rpm", "0", stdout=io.StringIO(), stderr=io.StringIO())
