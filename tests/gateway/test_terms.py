"""A key's admission terms: worked out once a minute, and afresh as soon as the configuration changes."""

from __future__ import annotations

from decimal import Decimal

import pytest

from studio.core.entries import BudgetEntry, LimitEntry, ModelEntry, PriceEntry, Snapshot
from studio.core.errors import LimitExceeded
from studio.core.principal import Principal
from studio.gateway import admission, terms
from studio.gateway.cost import Usage
from tests.gateway.spend_support import backend  # noqa: F401

NOW = 1_000_000 * 60 + 45.0  # 45 s into a minute
ALICE = Principal(user_id=1, key_id=10, team_id=5)
MODEL = ModelEntry(model_id="m", kind="text", routes=frozenset({"chat"}), capabilities={}, default_protocol="openai",
                   owned_by="t", created=0)


def budget(scope: str, target: int, budget_id: int) -> BudgetEntry:
    return BudgetEntry(id=budget_id, scope=scope, target_id=target, limit_nano=10**12, period="day", soft_percent=80,
                       label=f"the budget of {scope} {target}")


def test_terms_are_worked_out_once_a_minute():
    snap = Snapshot(limits={(10, ""): LimitEntry(rpm=5)})
    first = terms.terms_for(snap, ALICE, "m", NOW)
    assert terms.terms_for(snap, ALICE, "m", NOW + 10) is first
    later = terms.terms_for(snap, ALICE, "m", NOW + 20)  # the next minute
    assert later is not first
    assert later.shape(0).rows[0][2] == first.shape(0).rows[0][1]  # the old minute is the previous one


def test_a_new_snapshot_takes_effect_on_the_next_call():
    first = terms.terms_for(Snapshot(limits={(10, ""): LimitEntry(rpm=5)}), ALICE, "m", NOW)
    changed = terms.terms_for(Snapshot(limits={(10, ""): LimitEntry(rpm=2)}), ALICE, "m", NOW)
    assert [r.limit for r in first.shape(0).rules] == [5]
    assert [r.limit for r in changed.shape(0).rules] == [2]
    assert terms.terms_for(Snapshot(), ALICE, "m", NOW) is None  # no limit and no budget any more


def test_the_terms_of_each_key_user_team_and_model_are_their_own():
    snap = Snapshot(limits={(10, ""): LimitEntry(rpm=5), (10, "m"): LimitEntry(tpm=100), (11, ""): LimitEntry(rpm=9)},
                    budgets={("key", 10): (budget("key", 10, 1),), ("team", 5): (budget("team", 5, 2),),
                             ("user", 2): (budget("user", 2, 3),)})
    mine = terms.terms_for(snap, ALICE, "m", NOW)
    other_model = terms.terms_for(snap, ALICE, "other", NOW)
    other_key = terms.terms_for(snap, Principal(user_id=2, key_id=11), "m", NOW)
    assert [(r.what, r.limit) for r in mine.shape(0).rules] == [("requests", 5), ("tokens", 100)]
    assert [b.budget.id for b in mine.holds] == [1, 2]
    assert [(r.what, r.limit) for r in other_model.shape(0).rules] == [("requests", 5)]
    assert [(r.what, r.limit) for r in other_key.shape(0).rules] == [("requests", 9)]
    assert [b.budget.id for b in other_key.holds] == [3]
    assert terms.terms_for(snap, Principal(user_id=4), "m", NOW) is None  # a studio user without key or budget


def test_each_check_of_a_shape_is_given_what_it_adds():
    """One request, the call's tokens, its images or its reserve, in the checks' order, whatever
    their number (none: a text call under an images limit alone); a settlement moves the budgets
    by the cost's part and the token limits by the tokens'."""
    amounts = {terms.REQUEST: 1, terms.TOKENS: 300, terms.IMAGES: 2, terms.RESERVE: 7_000}

    def adds(shape: terms.Shape) -> list[int]:
        return [amounts[kind] for kind in shape.kinds]

    images_only = terms.terms_for(Snapshot(limits={(10, ""): LimitEntry(ipm=4)}), ALICE, "m", NOW)
    assert adds(images_only.shape(0)) == []
    assert adds(images_only.shape(2)) == [2]
    snap = Snapshot(limits={(10, ""): LimitEntry(rpm=5, tpm=1000, ipm=4)}, budgets={("key", 10): (budget("key", 10, 1),)})
    every = terms.terms_for(snap, ALICE, "m", NOW)
    assert adds(every.shape(0)) == [1, 300, 7_000]
    assert adds(every.shape(2)) == [1, 300, 2, 7_000]
    settled = {terms.TOKENS: -40, terms.RESERVE: -500}
    assert [settled[kind] for kind in every.settled_kinds] == [-500, -40]  # the budget's, then the tokens'
    assert every.settled_keys == (every.holds[0].key, every.token_keys[0])


@pytest.mark.django_db(transaction=True)
async def test_a_lowered_limit_refuses_the_very_next_call(backend, monkeypatch):  # noqa: F811
    from studio.gateway import clock

    monkeypatch.setattr(clock, "now", lambda: NOW)
    prices = {"m": (PriceEntry(model_id="m", upstream_id=None, effective_from=0.0, per_request=Decimal("0.01")),)}
    roomy = Snapshot(prices=prices, limits={(10, ""): LimitEntry(rpm=100)})
    ticket = await admission.admit(ALICE, MODEL, Usage(), snap=roomy)
    ticket.charge(Usage(), None)
    assert ticket.headers["x-ratelimit-limit-requests"][1] == "100"
    tight = Snapshot(prices=prices, limits={(10, ""): LimitEntry(rpm=1)})  # the admin lowers it: a new snapshot
    with pytest.raises(LimitExceeded) as refused:
        await admission.admit(ALICE, MODEL, Usage(), snap=tight)
    assert "1 requests per minute" in refused.value.message
    await admission.drain()
