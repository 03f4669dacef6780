"""The registry: one entry per vendor, capabilities checked against the contracts, typed look-ups."""

from __future__ import annotations

import re

import pytest

from studio.core.entries import ModelEntry
from studio.core.errors import CapabilityMissing, NoUpstream
from studio.core.video_states import VideoStatus
from studio.providers import registry
from studio.providers.base import BaseUrlRule, Provider
from studio.providers.contracts import Capability
from tests.providers.video_fakes import upstream

EXPECTED = {
    "gemini": {Capability.NATIVE_IMAGE, Capability.IMAGES, Capability.EMBEDDINGS},
    "openai": {Capability.IMAGES, Capability.TEXT, Capability.EMBEDDINGS, Capability.EMBEDDING_TOKENS},
    "ark": {Capability.IMAGES, Capability.VIDEO_TASKS},
    "dashscope": {Capability.VIDEO_TASKS},
    "anthropic": {Capability.TEXT, Capability.TOKEN_COUNT},
}


def model(default_protocol: str = "gemini") -> ModelEntry:
    return ModelEntry(model_id="m-1", kind="image", routes=frozenset(), capabilities={},
                      default_protocol=default_protocol, owned_by="x", created=0)


def test_every_vendor_has_one_entry_declaring_its_capabilities():
    assert {name: set(v.capabilities) for name, v in registry.vendors().items()} == EXPECTED
    for name, vendor in registry.vendors().items():
        assert vendor.provider.protocol == name
        assert vendor.capabilities == vendor.provider.capabilities


def test_entries_name_the_formats_states_and_sandbox_modules():
    vendors = registry.vendors()
    assert vendors["openai"].text_formats == ("chat", "responses")
    assert vendors["anthropic"].text_formats == ("messages",)
    assert vendors["gemini"].text_formats == () and vendors["gemini"].video_format is None
    assert vendors["ark"].video_format == "ark" and vendors["ark"].has_callbacks
    assert vendors["dashscope"].video_format == "dashscope" and not vendors["dashscope"].has_callbacks
    assert vendors["ark"].video_states["succeeded"] == VideoStatus.SUCCEEDED
    assert vendors["dashscope"].video_states["CANCELED"] == VideoStatus.CANCELLED
    assert vendors["openai"].video_states == {}
    assert set(registry.sandbox_modules()) == {"gemini", "gemini_embeddings", "openai_images", "openai_text",
                                               "openai_responses", "openai_embeddings", "ark_images", "ark_tasks",
                                               "dashscope", "anthropic"}
    assert [p for p, _ in registry.protocol_choices()] == [*EXPECTED, "sandbox"]


def test_a_class_claiming_a_capability_it_lacks_is_refused_at_registration():
    class Half(Provider):
        protocol = "half"
        capabilities = frozenset({Capability.TEXT})
        base_url = BaseUrlRule("/v1", re.compile(r"/v1$"))

    with pytest.raises(TypeError, match="text_formats.*text_request.*text_stream|text_formats"):
        registry.Vendor("half", "Half", Half)
    with pytest.raises(TypeError, match="speaks 'half'"):
        registry.Vendor("other", "Other", Half)


def test_settings_may_replace_an_entry(settings):
    registry.vendors.cache_clear()
    settings.STUDIO_PROVIDERS = {"anthropic": "tests.providers.test_registry.RELABELLED"}
    try:
        assert registry.vendor("anthropic").label == "Anthropic relay"
        settings.STUDIO_PROVIDERS = {"gemini": "tests.providers.test_registry.RELABELLED"}
        registry.vendors.cache_clear()
        with pytest.raises(TypeError, match="STUDIO_PROVIDERS"):
            registry.vendors()
    finally:
        registry.vendors.cache_clear()


def test_the_sandbox_speaks_the_models_protocol():
    sandbox = upstream("sandbox", "http://sandbox.test", "k")
    assert registry.effective_protocol(sandbox, model("openai")) == "openai"
    assert registry.vendor_for(sandbox, model("ark")).protocol == "ark"
    assert registry.effective_protocol(upstream("gemini", "http://g.test", "k"), model("openai")) == "gemini"


def test_capable_keeps_upstreams_with_the_capability_in_order():
    ups = [upstream("anthropic", "http://a.test", "k", id=1), upstream("gemini", "http://g.test", "k", id=2),
           upstream("sandbox", "http://s.test", "k", id=3)]
    assert [u.id for u in registry.capable(ups, model("gemini"), Capability.NATIVE_IMAGE)] == [2, 3]
    assert registry.capable([], model(), Capability.TEXT) == []
    with pytest.raises(CapabilityMissing) as caught:
        registry.capable(ups[:2], model(), Capability.VIDEO_TASKS)
    assert caught.value.status == 400 and caught.value.code == "model_not_supported"
    assert caught.value.param == "model" and "anthropic, gemini" in caught.value.message


def test_typed_lookups_refuse_a_protocol_without_the_capability():
    text_only = upstream("anthropic", "http://a.test", "k")
    with pytest.raises(CapabilityMissing, match="native image generation"):
        registry.native_upstream(text_only, model())
    with pytest.raises(CapabilityMissing, match="the images API"):
        registry.images_upstream(text_only, model())
    with pytest.raises(NoUpstream):
        registry.video_upstream("openai", text_only)
    with pytest.raises(NoUpstream):
        registry.vendor("nonexistent")


async def test_typed_lookups_bind_the_provider_to_the_upstream():
    gemini = upstream("gemini", "http://g.test", "k")
    provider = registry.native_upstream(gemini, model())
    assert provider.upstream is gemini and provider.protocol == "gemini"
    assert registry.text_upstream(upstream("openai", "http://o.test", "k"), model()).text_formats == ("chat", "responses")


RELABELLED = registry.Vendor("anthropic", "Anthropic relay", registry.vendors()["anthropic"].provider)
