"""Who may use which model."""

from __future__ import annotations

from studio.core.principal import Principal


def test_no_allow_list_means_every_model():
    assert Principal(user_id=1).may_use("anything")


def test_allow_list_limits_the_models():
    principal = Principal(user_id=1, key_id=2, allowed_models=frozenset({"omicron-4-mini"}))
    assert principal.may_use("omicron-4-mini")
    assert not principal.may_use("epsilon-4.5")


def test_an_empty_allow_list_allows_nothing():
    assert not Principal(user_id=1, allowed_models=frozenset()).may_use("omicron-4-mini")
