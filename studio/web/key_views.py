"""Keys for users: create (the secret is shown once), name, restrict to models, expire, revoke,
and see each key's recent usage. A key may belong to one of the user's teams: what it makes is
then team-visible in that team's gallery.

Saving a key invalidates the gateway's key snapshot (a signal), so a revoked key stops working
on the next /v1 request.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Max, Sum
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.dateparse import parse_date
from django.views.decorators.http import require_POST

from studio.gateway import permissions as access
from studio.models import ApiKey, PlatformModel, Role, Team, UsageRecord

MAX_NAME = 120
RECENT_PER_KEY = 10
SUMMARY_DAYS = 30


class KeyFormError(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


@dataclass
class KeyForm:
    name: str
    team: Team | None
    allowed_models: list[str]
    expires_at: datetime | None

    @classmethod
    def parse(cls, request: HttpRequest, *, with_team: bool = True) -> KeyForm:
        name = request.POST.get("name", "").strip()
        if not name or len(name) > MAX_NAME:
            raise KeyFormError("name", f"give the key a name of 1 to {MAX_NAME} characters")
        known = set(PlatformModel.objects.values_list("model_id", flat=True))
        models = [m for m in request.POST.getlist("models") if m]
        unknown = [m for m in models if m not in known]
        if unknown:
            raise KeyFormError("models", f"unknown model {unknown[0]!r}")
        team = None
        team_id = request.POST.get("team", "").strip() if with_team else ""
        if team_id:
            roles = access.roles_of(request.user)
            team = Team.objects.filter(id=int(team_id) if team_id.isdigit() else 0).first()
            if team is None or not access.has_role(roles, team.id, Role.MEMBER):
                raise KeyFormError("team", "you can only make keys for teams where you may add")
        return cls(name=name, team=team, allowed_models=sorted(set(models)), expires_at=_expiry(request))


def _expiry(request: HttpRequest) -> datetime | None:
    raw = request.POST.get("expires", "").strip()
    if not raw:
        return None
    day = parse_date(raw)
    if day is None:
        raise KeyFormError("expires", "must be a date (YYYY-MM-DD)")
    # The key works through the whole chosen day.
    expires = timezone.make_aware(datetime.combine(day + timedelta(days=1), time.min))
    if expires <= timezone.now():
        raise KeyFormError("expires", "must be today or later")
    return expires


def _usage(keys: list[ApiKey]) -> tuple[dict[int, dict], dict[int, list[UsageRecord]]]:
    """Per key: totals of the last 30 days (one query) and the latest calls (one query)."""
    since = timezone.now() - timedelta(days=SUMMARY_DAYS)
    ids = [k.id for k in keys]
    totals = {
        row["api_key_id"]: row
        for row in UsageRecord.objects.filter(api_key_id__in=ids, created__gte=since)
        .values("api_key_id").annotate(calls=Count("id"), tokens=Sum("total_tokens"), images=Sum("images"),
                                       errors=Count("id", filter=_errors()), last=Max("created"))
    }
    recent: dict[int, list[UsageRecord]] = defaultdict(list)
    for record in UsageRecord.objects.filter(api_key_id__in=ids).order_by("-created")[: RECENT_PER_KEY * 20]:
        if len(recent[record.api_key_id]) < RECENT_PER_KEY:
            recent[record.api_key_id].append(record)
    return totals, recent


def _errors():
    from studio.models.usage import FAILED

    return FAILED


def _page(request: HttpRequest, new_secret: str = "", new_key: ApiKey | None = None, status: int = 200,
          form_error: KeyFormError | None = None) -> HttpResponse:
    keys = list(ApiKey.objects.filter(owner=request.user).select_related("team").order_by("-created"))
    totals, recent = _usage(keys)
    roles = access.roles_of(request.user)
    from studio.models import Budget, RateLimit
    from studio.web.key_limit_views import may_set_limits

    limits = {r.api_key_id: r for r in RateLimit.objects.filter(api_key__in=keys, model_id="")}
    budgets = {b.api_key_id: b for b in Budget.objects.filter(api_key__in=keys)}
    rows = [{"key": k, "totals": totals.get(k.id), "recent": recent.get(k.id, []),
             "active": k.is_active, "limits": limits.get(k.id), "budget": budgets.get(k.id),
             "may_limit": may_set_limits(request.user, k, roles)} for k in keys]
    return render(request, "studio/keys.html", {
        "rows": rows,
        "models": list(PlatformModel.objects.filter(enabled=True).order_by("model_id")
                       .values_list("model_id", flat=True)),
        "teams": Team.objects.filter(id__in=[t for t in roles if access.has_role(roles, t, Role.MEMBER)]),
        "new_secret": new_secret, "new_key": new_key, "form_error": form_error,
        "summary_days": SUMMARY_DAYS, "today": timezone.localdate().isoformat(),
    }, status=status)


NEW_SECRET = "studio.new_key"  # session entry: the just-made key's id and secret, shown once


@login_required
def keys(request: HttpRequest) -> HttpResponse:
    """POST makes a key and redirects (a reload never makes a second one); the GET after it shows
    the secret once, from the session, and forgets it."""
    if request.method != "POST":
        fresh = request.session.pop(NEW_SECRET, None)
        key = ApiKey.objects.filter(id=fresh["id"], owner=request.user).first() if isinstance(fresh, dict) else None
        response = _page(request, new_secret=fresh["secret"] if key else "", new_key=key)
        response["Cache-Control"] = "no-store"
        return response
    try:
        form = KeyForm.parse(request)
    except KeyFormError as exc:
        return _page(request, status=400, form_error=exc)
    key, secret = ApiKey.issue(request.user, name=form.name, team=form.team,
                               allowed_models=form.allowed_models, expires_at=form.expires_at)
    request.session[NEW_SECRET] = {"id": key.id, "secret": secret}
    return redirect("keys")


def _own_key(request: HttpRequest, key_id: int) -> ApiKey:
    key = ApiKey.objects.filter(id=key_id, owner=request.user).first()
    if key is None:
        raise Http404("no such key")
    return key


@login_required
@require_POST
def update_key(request: HttpRequest, key_id: int) -> HttpResponse:
    key = _own_key(request, key_id)
    try:
        form = KeyForm.parse(request, with_team=False)
    except KeyFormError as exc:
        return _page(request, status=400, form_error=exc)
    key.name, key.allowed_models, key.expires_at = form.name, form.allowed_models, form.expires_at
    key.save(update_fields=["name", "allowed_models", "expires_at"])
    messages.success(request, f"Key {key.name} saved.")
    return redirect("keys")


@login_required
@require_POST
def revoke_key(request: HttpRequest, key_id: int) -> HttpResponse:
    key = _own_key(request, key_id)
    key.revoked = True
    key.save(update_fields=["revoked"])
    messages.success(request, f"Key {key.name} ({key.prefix}…) revoked; it no longer works.")
    return redirect("keys")
