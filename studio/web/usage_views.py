"""The Usage page: spend and requests per day, model, key and team; errors and latency per
upstream; a date range; CSV export. Drawn by ``static/studio/js/usage.js`` with Chart.js (served
from ``static/vendor``) from the JSON embedded in the page."""

from __future__ import annotations

import csv
import time

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from studio.gateway import prices
from studio.models import PlatformModel
from studio.web import usage_query


def catalog_prices() -> list[dict[str, object]]:
    """Every enabled model with its price now, for the catalog table."""
    table = prices.load_all()
    out = []
    for model in PlatformModel.objects.filter(enabled=True).order_by("kind", "model_id"):
        price = prices.find(table.get(model.model_id, ()), None, time.time())
        out.append({"model": model.model_id, "kind": model.get_kind_display(),
                    "lines": prices.summary(price) if price else ["no price set"]})
    return out


@login_required
def usage(request: HttpRequest) -> HttpResponse:
    scope = request.GET.get("scope") or "me"
    rows = usage_query.records_for(request.user, scope)
    scopes = usage_query.scopes_for(request.user)
    if rows is None:
        return render(request, "studio/usage.html", {"scopes": scopes, "forbidden": True, "scope": scope},
                      status=403)
    start, end = usage_query.date_range(request.GET.get("from", ""), request.GET.get("to", ""))
    rows = usage_query.in_range(rows.select_related(None), start, end)
    if request.GET.get("format") == "csv":
        response = HttpResponse(content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="usage-{start}-{end}.csv"'
        writer = csv.writer(response)
        writer.writerow(usage_query.CSV_FIELDS)
        writer.writerows(usage_query.csv_rows(rows))
        return response
    data = usage_query.summary(rows, start, end)
    return render(request, "studio/usage.html", {
        "scopes": scopes, "scope": scope, "data": data, "start": start, "end": end,
        "catalog": catalog_prices(),
    })
