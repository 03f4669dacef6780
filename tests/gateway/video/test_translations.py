"""Which pair module translates a video body, found by (inbound format, upstream format)."""

from __future__ import annotations

import pytest

from studio.core.errors import CapabilityMissing
from studio.gateway.video import generic_to_ark, generic_to_dashscope, translations


def test_pairs_are_keyed_by_their_formats():
    assert translations.pair("generic", "ark") is generic_to_ark
    assert translations.pair("generic", "dashscope") is generic_to_dashscope
    assert all(key == (m.SOURCE, m.TARGET) for key, m in translations.PAIRS.items())


def test_a_protocols_format_comes_from_its_registry_entry():
    assert translations.protocol_format("ark") == "ark"
    assert translations.protocol_format("dashscope") == "dashscope"
    assert translations.protocol_format("openai") is None  # no video tasks


@pytest.mark.parametrize(("source", "target", "words"), [
    ("generic", None, "no video format"), ("ark", "dashscope", "over an upstream that speaks dashscope"),
])
def test_a_missing_pair_is_a_capability_error(source, target, words):
    with pytest.raises(CapabilityMissing) as caught:
        translations.pair(source, target)
    assert words in caught.value.message and caught.value.status == 400
