"""The Usage page's sums: scopes, date ranges, and which calls count as errors."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from studio.web import usage_query
from tests.web.library_factories import make_team

pytestmark = pytest.mark.django_db


def record(account, status: int, cost: str = "0.01", **fields):
    from studio.models import UsageRecord

    return UsageRecord.objects.create(api_key=account.key, user=account.user, model_id="omicron-4-mini",
                                      route="chat", status_code=status, cost_usd=Decimal(cost), **fields)


def test_a_client_that_left_is_charged_but_not_an_error(alice):
    record(alice, 200)
    record(alice, 502, cost="0")
    record(alice, 499, cost="0.004")  # left mid-stream: billed for what it got
    today = timezone.localdate()
    data = usage_query.summary(usage_query.records_for(alice.user, "me"), today, today)
    assert data["totals"] == {"spend": pytest.approx(0.014), "requests": 3, "errors": 1}
    assert data["daily"][-1]["errors"] == 1
    assert data["models"][0]["errors"] == 1
    line = usage_query.csv_rows(usage_query.records_for(alice.user, "me"))[0]
    assert line[usage_query.CSV_FIELDS.index("requests")] == 3
    assert line[usage_query.CSV_FIELDS.index("errors")] == 1


def test_each_person_sees_their_own_and_admins_their_team(alice, make_account):
    bob = make_account("bob")
    team = make_team(alice.user, "Design", bob=(bob.user, "member"))
    record(alice, 200)
    record(bob, 200, team=team)
    assert [s.value for s in usage_query.scopes_for(bob.user)] == ["me"]
    assert usage_query.records_for(bob.user, f"team:{team.id}") is None
    assert usage_query.records_for(alice.user, f"team:{team.id}").count() == 1
    assert usage_query.records_for(alice.user, "all") is None
    assert usage_query.records_for(bob.user, "me").get().user == bob.user


def test_date_ranges_fall_back_and_are_bounded():
    today = timezone.localdate()
    assert usage_query.date_range("", "") == (today - timedelta(days=usage_query.DEFAULT_DAYS - 1), today)
    assert usage_query.date_range("not a date", "2026-03-10") == (date(2026, 2, 9), date(2026, 3, 10))
    assert usage_query.date_range("2026-03-10", "2026-03-01") == (date(2026, 3, 1), date(2026, 3, 10))
    start, end = usage_query.date_range("2020-01-01", "2026-03-10")
    assert (end - start).days == usage_query.MAX_DAYS
