"""The Usage page in a real browser: the charts draw the numbers in the database, on a desktop
and on a phone; the header shows the budget left and the alert banner."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from tests.browser.conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def seed_usage(account):
    from studio.models import Budget, BudgetAlert, Upstream, UsageRecord

    sandbox = Upstream.objects.get(name="Sandbox")
    now = timezone.now()
    rows = [("omicron-4-mini", "0.25", 200, 120, 0), ("omicron-4-mini", "0.50", 200, 180, 1),
            ("kappa-image-1", "1.25", 200, 900, 0), ("kappa-image-1", "0", 502, 3000, 0)]
    for model, cost, status, latency, days_ago in rows:
        UsageRecord.objects.create(api_key=account.key, user=account.user, model_id=model, upstream=sandbox,
                                   route="chat", status_code=status, cost_usd=Decimal(cost), latency_ms=latency,
                                   created=now - timedelta(days=days_ago))
    budget = Budget.objects.create(user=account.user, limit_usd=Decimal("2.50"), period="month")
    start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    BudgetAlert.objects.create(budget=budget, level="soft", window_start=start, spent_usd=Decimal("2.00"))


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 900}, {"width": 390, "height": 844}])
def test_usage_charts_show_the_database_numbers(browser, live_asgi, make_account, viewport):
    alice = make_account("alice")
    seed_usage(alice)
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    try:
        sign_in(page, live_asgi, "alice", "pw-alice-123")
        # Yesterday's $0.50 is last month's on the first of a month (UTC, as budget periods are).
        left = "0.50" if timezone.now().day > 1 else "1.00"
        assert f"Budget left: ${left} of $2.50 / month" in page.locator("#budget-left").inner_text()
        assert "Budget alert" in page.get_by_role("alert").first.inner_text()
        if viewport["width"] < 700:  # a phone shows the main navigation behind its Menu button
            page.get_by_role("button", name="Menu").click()
        page.get_by_role("link", name="Usage").click()
        page.wait_for_function("window.usageCharts && window.usageCharts['chart-upstreams']")
        assert page.locator("#total-spend").inner_text() == "$2.0000"
        daily = page.evaluate("window.usageCharts['chart-daily'].data.datasets.map(d => d.data)")
        assert sum(daily[0]) == pytest.approx(2.0) and sum(daily[1]) == 4
        assert daily[0][-1] == pytest.approx(1.5) and daily[0][-2] == pytest.approx(0.5)
        models = page.evaluate("(() => { const c = window.usageCharts['chart-models'];"
                               " return Object.fromEntries(c.data.labels.map((l, i) => [l, c.data.datasets[0].data[i]])); })()")
        assert models == {"kappa-image-1": pytest.approx(1.25), "omicron-4-mini": pytest.approx(0.75)}
        upstream = page.evaluate("window.usageCharts['chart-upstreams'].data.datasets.map(d => d.data[0])")
        assert upstream[0] in (180, 900) and upstream[1] == 3000 and upstream[2] == pytest.approx(25)
        # Drawn, not just configured: the canvas has pixels and fits the screen.
        box = page.locator("#chart-daily").bounding_box()
        assert 0 < box["width"] <= viewport["width"] and box["height"] > 100
        painted = page.evaluate("(() => { const c = document.getElementById('chart-models');"
                                " const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
                                " let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n; })()")
        assert painted > 500
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"] + 1
        csv = page.request.get(live_asgi + page.locator("#usage-csv").get_attribute("href")).text()
        assert csv.splitlines()[0].startswith("day,model,key") and "kappa-image-1" in csv and "1.25" in csv
        page.screenshot(path=f"test-artifacts/usage-{viewport['width']}.png", full_page=True)
    finally:
        context.close()
