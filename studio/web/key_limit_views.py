"""Limits and a budget of one key, set on the Keys page by an admin of the key's team (or staff).

Empty fields mean no limit; an empty budget removes the key's budget. Saving invalidates the
gateway's snapshot (signals), so the next /v1 call sees the new limits.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from studio.gateway import permissions as access
from studio.models import ApiKey, Budget, Period, RateLimit, Role

LIMIT_FIELDS = ("rpm", "tpm", "ipm", "concurrent_videos")


def may_set_limits(user, key: ApiKey, roles: dict[int, str] | None = None) -> bool:
    if user.is_staff:
        return True
    return key.team_id is not None and access.has_role(roles if roles is not None else access.roles_of(user),
                                                       key.team_id, Role.ADMIN)


def _count(request: HttpRequest, name: str) -> int | None:
    raw = request.POST.get(name, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{name}: a whole number of at least 1, or empty for no limit")
    return int(raw)


@login_required
@require_POST
def key_limits(request: HttpRequest, key_id: int) -> HttpResponse:
    key = ApiKey.objects.filter(id=key_id).first()
    if key is None or not may_set_limits(request.user, key):
        raise Http404("no such key")
    try:
        values = {name: _count(request, name) for name in LIMIT_FIELDS}
        raw_budget = request.POST.get("budget_usd", "").strip()
        budget = Decimal(raw_budget) if raw_budget else None
        if budget is not None and (not budget.is_finite() or budget < 0):
            raise ValueError("budget_usd: a non-negative amount")
        period = request.POST.get("budget_period") or Period.MONTH
        if period not in Period.values:
            raise ValueError("budget_period: day, week, month or total")
    except (ValueError, InvalidOperation) as exc:
        messages.error(request, f"Limits of {key.name} not saved: {exc}")
        return redirect("keys")
    with transaction.atomic():
        RateLimit.objects.update_or_create(api_key=key, model_id="", defaults=values)
        Budget.objects.filter(api_key=key).delete()
        if budget is not None:
            Budget.objects.create(api_key=key, limit_usd=budget, period=period)
    messages.success(request, f"Limits of {key.name} saved.")
    return redirect("keys")
