"""Team admins set a key's limits and budget on the Keys page; members cannot."""

from __future__ import annotations

from decimal import Decimal

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_team_admin_sets_limits_and_budget_of_a_team_key(web, make_account):
    from studio.models import ApiKey, Budget, Membership, RateLimit, Role, Team

    team = Team.objects.create(name="Render", slug="render")
    admin = make_account("ada")
    member = make_account("max")
    Membership.objects.create(team=team, user=admin.user, role=Role.ADMIN)
    Membership.objects.create(team=team, user=member.user, role=Role.MEMBER)
    key, _ = ApiKey.issue(admin.user, name="farm", team=team)

    web.force_login(member.user)
    assert web.post(f"/keys/{key.id}/limits", {"rpm": "5"}).status_code == 404
    web.force_login(admin.user)
    page = web.get("/keys/")
    assert "Limits of farm" in page.content.decode()
    response = web.post(f"/keys/{key.id}/limits", {"rpm": "5", "tpm": "", "budget_usd": "3.5",
                                                   "budget_period": "day"})
    assert response.status_code == 302
    limit = RateLimit.objects.get(api_key=key)
    assert (limit.rpm, limit.tpm) == (5, None)
    assert Budget.objects.get(api_key=key).limit_usd == Decimal("3.5")
    web.post(f"/keys/{key.id}/limits", {"rpm": "zero"})
    assert RateLimit.objects.get(api_key=key).rpm == 5  # refused, named in the message
