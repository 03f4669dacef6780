"""Teams: create one (the creator is its owner), add existing users, roles, collections, delete.

Roles are ranked (viewer < member < admin < owner; see ``Membership.has_role``): viewers see the
team gallery, members add to it and make collections, admins manage members, the owner deletes
the team. Admins cannot touch an owner, nor make anyone an owner; only an owner can.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_POST

from studio.gateway import permissions as access
from studio.models import Collection, Membership, Role, Team

MAX_NAME = 120


def _unique_slug(name: str) -> str:
    base = slugify(name)[:100] or "team"
    slug, n = base, 1
    while Team.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


@login_required
def teams(request: HttpRequest) -> HttpResponse:
    """The user's teams, and the form that creates one."""
    if request.method == "POST":
        name = request.POST.get("name", "").strip()
        if not name or len(name) > MAX_NAME:
            messages.error(request, f"name: give the team a name of 1 to {MAX_NAME} characters")
        else:
            with transaction.atomic():
                team = Team.objects.create(name=name, slug=_unique_slug(name))
                Membership.objects.create(team=team, user=request.user, role=Role.OWNER)
            messages.success(request, f"Team {team.name} created; you are its owner.")
            return redirect("team-detail", slug=team.slug)
    memberships = Membership.objects.filter(user=request.user).select_related("team").order_by("team__name")
    return render(request, "studio/teams.html", {"memberships": memberships})


@login_required
def team_detail(request: HttpRequest, slug: str) -> HttpResponse:
    team, me = access.team_or_404(request.user, slug)
    members = team.memberships.select_related("user").order_by("user__username")
    return render(request, "studio/teams_detail.html", {
        "team": team, "me": me, "members": members,
        "collections": team.collections.order_by("name"),
        "roles": Role.choices,
        "assignable_roles": [(value, label) for value, label in Role.choices
                             if value != Role.OWNER or me.has_role(Role.OWNER)],
        "can_add": me.has_role(Role.MEMBER), "can_manage": me.has_role(Role.ADMIN),
        "is_owner": me.has_role(Role.OWNER),
        "gallery_url": f"{reverse('gallery')}?team={team.id}",
    })


def _role_from(request: HttpRequest, me: Membership) -> str:
    role = request.POST.get("role", Role.MEMBER)
    if role not in Role.values:
        raise ValueError(f"role must be one of {', '.join(Role.values)}")
    if role == Role.OWNER and not me.has_role(Role.OWNER):
        raise PermissionDenied("only an owner can make another owner")
    return role


@login_required
@require_POST
def add_member(request: HttpRequest, slug: str) -> HttpResponse:
    team, me = access.team_or_404(request.user, slug, Role.ADMIN)
    username = request.POST.get("username", "").strip()
    try:
        role = _role_from(request, me)
    except ValueError as exc:
        messages.error(request, str(exc))
        return redirect("team-detail", slug=slug)
    user = get_user_model().objects.filter(username=username).first() if username else None
    if user is None:
        messages.error(request, f"username: no user called {username!r}")
    elif Membership.objects.filter(team=team, user=user).exists():
        messages.error(request, f"username: {username} is already in {team.name}")
    else:
        Membership.objects.create(team=team, user=user, role=role)
        messages.success(request, f"{username} joined {team.name} as {role}.")
    return redirect("team-detail", slug=slug)


def _target(team: Team, me: Membership, member_id: int) -> Membership:
    target = Membership.objects.filter(team=team, id=member_id).select_related("user").first()
    if target is None:
        from django.http import Http404

        raise Http404("no such member")
    if target.role == Role.OWNER and not me.has_role(Role.OWNER):
        raise PermissionDenied("only an owner can change an owner")
    return target


def _last_owner(team: Team, target: Membership) -> bool:
    return target.role == Role.OWNER and team.memberships.filter(role=Role.OWNER).count() == 1


@login_required
@require_POST
def change_role(request: HttpRequest, slug: str, member_id: int) -> HttpResponse:
    team, me = access.team_or_404(request.user, slug, Role.ADMIN)
    target = _target(team, me, member_id)
    try:
        role = _role_from(request, me)
    except ValueError as exc:
        messages.error(request, str(exc))
        return redirect("team-detail", slug=slug)
    if _last_owner(team, target) and role != Role.OWNER:
        messages.error(request, "role: a team keeps at least one owner")
    else:
        target.role = role
        target.save(update_fields=["role"])
        messages.success(request, f"{target.user.username} is now {role}.")
    return redirect("team-detail", slug=slug)


@login_required
@require_POST
def remove_member(request: HttpRequest, slug: str, member_id: int) -> HttpResponse:
    team, me = access.team_or_404(request.user, slug)
    target = _target(team, me, member_id)
    leaving = target.user_id == request.user.id
    if not leaving and not me.has_role(Role.ADMIN):
        raise PermissionDenied("only admins remove members")
    if _last_owner(team, target):
        messages.error(request, "a team keeps at least one owner; delete the team instead")
        return redirect("team-detail", slug=slug)
    target.delete()
    if leaving:
        messages.success(request, f"You left {team.name}.")
        return redirect("teams")
    messages.success(request, f"{target.user.username} was removed from {team.name}.")
    return redirect("team-detail", slug=slug)


@login_required
@require_POST
def delete_team(request: HttpRequest, slug: str) -> HttpResponse:
    team, _ = access.team_or_404(request.user, slug, Role.OWNER)
    if request.POST.get("confirm") != team.slug:
        messages.error(request, "confirm: type the team's slug to delete it")
        return redirect("team-detail", slug=slug)
    name = team.name
    team.delete()  # its assets stay with their owners (team set null); collections go
    messages.success(request, f"Team {name} deleted.")
    return redirect("teams")


@login_required
@require_POST
def create_collection(request: HttpRequest, slug: str) -> HttpResponse:
    team, _ = access.team_or_404(request.user, slug, Role.MEMBER)
    name = request.POST.get("name", "").strip()
    if not name or len(name) > MAX_NAME:
        messages.error(request, f"name: give the collection a name of 1 to {MAX_NAME} characters")
    else:
        Collection.objects.create(name=name, owner=request.user, team=team)
        messages.success(request, f"Collection {name} created.")
    return redirect("team-detail", slug=slug)


@login_required
@require_POST
def create_personal_collection(request: HttpRequest) -> HttpResponse:
    name = request.POST.get("name", "").strip()
    if not name or len(name) > MAX_NAME:
        messages.error(request, f"name: give the collection a name of 1 to {MAX_NAME} characters")
    else:
        Collection.objects.create(name=name, owner=request.user)
        messages.success(request, f"Collection {name} created.")
    return redirect(request.POST.get("next") or "gallery") if _safe_next(request) else redirect("gallery")


def _safe_next(request: HttpRequest) -> bool:
    from django.utils.http import url_has_allowed_host_and_scheme

    target = request.POST.get("next") or ""
    return bool(target) and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()})
