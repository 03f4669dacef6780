"""Fixtures shared by the engine tests: a team with one user per role, and an outsider."""

from __future__ import annotations

from dataclasses import dataclass

import pytest


@dataclass
class Crew:
    team: object
    owner: object
    admin: object
    member: object
    viewer: object
    outsider: object


@pytest.fixture
def crew(django_user_model) -> Crew:
    from studio.models import Membership, Team

    team = Team.objects.create(name="Crew", slug="crew")
    users = {}
    for role in ("owner", "admin", "member", "viewer", "outsider"):
        users[role] = django_user_model.objects.create_user(username=role)  # no password: no slow hashing
        if role != "outsider":
            Membership.objects.create(team=team, user=users[role], role=role)
    return Crew(team=team, **users)
