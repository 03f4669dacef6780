"""The capability contracts: the members a provider must have to claim each one."""

from __future__ import annotations

from studio.providers.contracts import CONTRACTS, Capability, contract_members
from studio.providers.registry import VENDORS


def test_every_capability_has_a_contract():
    assert set(CONTRACTS) == set(Capability)


def test_members_include_the_shared_upstream_fields_and_the_contracts_own():
    assert contract_members(CONTRACTS[Capability.TEXT]) >= {"protocol", "capabilities", "upstream", "text_formats",
                                                            "text_request", "text_stream"}
    video = contract_members(CONTRACTS[Capability.VIDEO_TASKS])
    assert {"video_format", "callback_field", "video_states", "video_create", "video_get", "video_cancel",
            "video_state", "parse_callback"} <= video
    assert not {"text_request", "__init__"} & video  # another contract's members, dunder methods


def test_each_vendor_has_every_member_of_what_it_claims():
    for entry in VENDORS:
        for capability in entry.provider.capabilities:
            missing = {name for name in contract_members(CONTRACTS[capability]) if not hasattr(entry.provider, name)
                       and name not in {"upstream"}}
            assert not missing, (entry.protocol, capability, missing)
