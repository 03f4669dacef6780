"""The numbers of the Usage page: who may see what, and the sums over usage records.

A person sees their own calls, a team admin their team's, staff everything. Everything is
summed in the database except latency percentiles, which are read per upstream from at most
``LATENCY_SAMPLE`` recent rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from django.db.models import Count, QuerySet, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from studio.gateway import permissions as access
from studio.models import Role, Team, UsageRecord
from studio.models.usage import FAILED

LATENCY_SAMPLE = 20000
DEFAULT_DAYS = 30
MAX_DAYS = 366


@dataclass(frozen=True)
class Scope:
    value: str  # "me", "team:<id>" or "all"
    label: str


def scopes_for(user) -> list[Scope]:
    found = [Scope("me", "My usage")]
    roles = access.roles_of(user)
    admin_teams = [t for t in roles if access.has_role(roles, t, Role.ADMIN)]
    for team in Team.objects.filter(id__in=admin_teams).order_by("name"):
        found.append(Scope(f"team:{team.id}", f"Team {team.name}"))
    if user.is_staff:
        found.append(Scope("all", "Everyone"))
    return found


def records_for(user, scope: str) -> QuerySet[UsageRecord] | None:
    """The records ``scope`` covers, or None if the user may not see it."""
    if scope not in {s.value for s in scopes_for(user)}:
        return None
    if scope == "me":
        return UsageRecord.objects.filter(user=user)
    if scope == "all":
        return UsageRecord.objects.all()
    return UsageRecord.objects.filter(team_id=int(scope.split(":", 1)[1]))


def date_range(raw_from: str, raw_to: str) -> tuple[date, date]:
    """Inclusive dates; bad or missing values fall back to the last 30 days."""
    today = timezone.localdate()
    try:
        end = date.fromisoformat(raw_to) if raw_to else today
    except ValueError:
        end = today
    try:
        start = date.fromisoformat(raw_from) if raw_from else end - timedelta(days=DEFAULT_DAYS - 1)
    except ValueError:
        start = end - timedelta(days=DEFAULT_DAYS - 1)
    if start > end:
        start, end = end, start
    return max(start, end - timedelta(days=MAX_DAYS)), end


def in_range(rows: QuerySet[UsageRecord], start: date, end: date) -> QuerySet[UsageRecord]:
    low = timezone.make_aware(datetime.combine(start, time.min))
    high = timezone.make_aware(datetime.combine(end + timedelta(days=1), time.min))
    return rows.filter(created__gte=low, created__lt=high)


def _money(value: Any) -> float:
    return float(value or Decimal(0))


def percentile(values: list[int], share: float) -> int | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(int(round(share * (len(ordered) - 1))), len(ordered) - 1)]


def summary(rows: QuerySet[UsageRecord], start: date, end: date) -> dict[str, Any]:
    errors = Count("id", filter=FAILED)
    days = {row["day"]: row for row in rows.annotate(day=TruncDate("created")).values("day")
            .annotate(spend=Sum("cost_usd"), requests=Count("id"), errors=errors)}
    daily = []
    for n in range((end - start).days + 1):
        day = start + timedelta(days=n)
        row = days.get(day, {})
        daily.append({"day": day.isoformat(), "spend": _money(row.get("spend")),
                      "requests": row.get("requests", 0), "errors": row.get("errors", 0)})

    def grouped(field: str, label_field: str | None = None) -> list[dict[str, Any]]:
        names = [field] + ([label_field] if label_field else [])
        out = []
        for row in rows.values(*names).annotate(spend=Sum("cost_usd"), requests=Count("id"), errors=errors) \
                .order_by("-spend", "-requests"):
            label = row.get(label_field) if label_field else row[field]
            out.append({"name": str(label if label is not None else "—"), "spend": _money(row["spend"]),
                        "requests": row["requests"], "errors": row["errors"]})
        return out

    upstreams = grouped("upstream_id", "upstream__name")
    latencies: dict[str, list[int]] = {}
    for name, latency in rows.exclude(latency_ms=None).order_by("-created") \
            .values_list("upstream__name", "latency_ms")[:LATENCY_SAMPLE]:
        latencies.setdefault(str(name if name is not None else "—"), []).append(latency)
    for row in upstreams:
        values = latencies.get(row["name"], [])
        row["error_rate"] = round(row["errors"] / row["requests"], 4) if row["requests"] else 0.0
        row["p50_ms"], row["p95_ms"] = percentile(values, 0.5), percentile(values, 0.95)
    totals = rows.aggregate(spend=Sum("cost_usd"), requests=Count("id"), errors=errors)
    return {
        "from": start.isoformat(), "to": end.isoformat(),
        "totals": {"spend": _money(totals["spend"]), "requests": totals["requests"], "errors": totals["errors"]},
        "daily": daily, "models": grouped("model_id"), "keys": grouped("api_key_id", "api_key__name"),
        "teams": grouped("team_id", "team__name"), "upstreams": upstreams,
    }


CSV_FIELDS = ["day", "model", "key", "team", "upstream", "requests", "errors", "input_tokens", "output_tokens",
              "images", "video_seconds", "cost_usd"]


def csv_rows(rows: QuerySet[UsageRecord]) -> list[list[Any]]:
    """One line per day, model, key, team and upstream."""
    out = []
    for row in rows.annotate(day=TruncDate("created")).values(
            "day", "model_id", "api_key__name", "team__name", "upstream__name").annotate(
            requests=Count("id"), errors=Count("id", filter=FAILED),
            input_tokens=Sum("input_tokens"), output_tokens=Sum("output_tokens"), images=Sum("images"),
            video_seconds=Sum("video_seconds"), cost=Sum("cost_usd")).order_by("day", "model_id"):
        out.append([row["day"].isoformat(), row["model_id"], row["api_key__name"] or "", row["team__name"] or "",
                    row["upstream__name"] or "", row["requests"], row["errors"], row["input_tokens"] or 0,
                    row["output_tokens"] or 0, row["images"] or 0, row["video_seconds"] or 0,
                    f"{(row['cost'] or Decimal(0)).normalize():f}"])
    return out
