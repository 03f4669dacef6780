"""The one place that knows the set of vendors: an entry per upstream protocol name.

A ``Vendor`` entry names the provider class and, read from it, everything the rest of the code
may need to know about that vendor: its capabilities (which contracts of
``studio.providers.contracts`` it implements), the text and video wire formats it speaks
natively, its video state map, its error mapping, its base-URL rule; plus its label for the admin
and the sandbox modules that imitate it offline. Registration checks that the class really has
every member of each contract it claims, so a missing method fails at start-up, not mid-request.

The engine never branches on a vendor name and never probes a provider: it asks for the typed
contract its route needs (``native_upstream``, ``images_upstream``, ``text_upstream``,
``video_upstream``), or filters a model's upstreams with ``capable``; an upstream whose protocol
lacks the capability is a ``CapabilityMissing`` (400, ``model_not_supported``) before any call.

``settings.STUDIO_PROVIDERS`` may add or replace entries: protocol name → dotted path of a
``Vendor``. Adding a vendor: a package ``studio/providers/<name>/`` with the provider class, its
error mapping and (for video) its state map; a sandbox module in ``studio/sandbox/``; one entry
in ``VENDORS`` below.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import cast

from django.conf import settings
from django.utils.module_loading import import_string

from studio.core.entries import ModelEntry, UpstreamEntry
from studio.core.errors import CapabilityMissing, NoUpstream
from studio.core.video_states import VideoStatus
from studio.providers.anthropic.provider import AnthropicProvider
from studio.providers.ark.provider import ArkProvider
from studio.providers.base import BaseUrlRule, ErrorMapping, Provider
from studio.providers.contracts import (
    CONTRACTS,
    Capability,
    EmbeddingsUpstream,
    ImagesUpstream,
    NativeImageUpstream,
    TextUpstream,
    TokenCountUpstream,
    VideoTaskUpstream,
    contract_members,
)
from studio.providers.dashscope.provider import DashScopeProvider
from studio.providers.deadlines import deadlines_for
from studio.providers.gemini.provider import GeminiProvider
from studio.providers.openai.provider import OpenAIProvider

# The protocol of the built-in sandbox upstream: it speaks every vendor's protocol, so a call
# through it uses the model's own ``default_protocol``.
SANDBOX = "sandbox"
# What each capability is called in an error a client reads.
CAPABILITY_NAMES = {
    Capability.NATIVE_IMAGE: "native image generation", Capability.IMAGES: "the images API",
    Capability.TEXT: "text", Capability.VIDEO_TASKS: "video tasks", Capability.EMBEDDINGS: "embeddings",
    Capability.TOKEN_COUNT: "counting tokens", Capability.EMBEDDING_TOKENS: "embeddings of token ids",
}


@dataclass(frozen=True, slots=True)
class Vendor:
    protocol: str
    label: str
    provider: type[Provider]
    sandbox_modules: tuple[str, ...] = ()  # modules of ``studio.sandbox`` that imitate it

    def __post_init__(self) -> None:
        if self.provider.protocol != self.protocol:
            raise TypeError(f"{self.provider.__name__} speaks '{self.provider.protocol}', not '{self.protocol}'")
        declared = set(dir(self.provider))
        for klass in self.provider.__mro__:
            declared |= set(klass.__dict__.get("__annotations__", {}))
        for capability in self.capabilities:
            missing = sorted(contract_members(CONTRACTS[capability]) - declared)
            if missing:
                raise TypeError(f"{self.provider.__name__} claims {capability} but lacks {', '.join(missing)}")

    @property
    def capabilities(self) -> frozenset[Capability]:
        return self.provider.capabilities

    @property
    def errors(self) -> ErrorMapping:
        return self.provider.error_mapping

    @property
    def base_url(self) -> BaseUrlRule:
        return self.provider.base_url

    @property
    def text_formats(self) -> tuple[str, ...]:
        return cast(type[TextUpstream], self.provider).text_formats if Capability.TEXT in self.capabilities else ()

    @property
    def video_format(self) -> str | None:
        if Capability.VIDEO_TASKS not in self.capabilities:
            return None
        return cast(type[VideoTaskUpstream], self.provider).video_format

    @property
    def video_states(self) -> Mapping[str, VideoStatus]:
        if Capability.VIDEO_TASKS not in self.capabilities:
            return {}
        return cast(type[VideoTaskUpstream], self.provider).video_states

    @property
    def has_callbacks(self) -> bool:
        if Capability.VIDEO_TASKS not in self.capabilities:
            return False
        return cast(type[VideoTaskUpstream], self.provider).callback_field is not None


VENDORS: tuple[Vendor, ...] = (
    Vendor("gemini", "Gemini", GeminiProvider, sandbox_modules=("gemini", "gemini_embeddings")),
    Vendor("openai", "OpenAI", OpenAIProvider, sandbox_modules=("openai_images", "openai_text", "openai_responses",
                                                                "openai_embeddings")),
    Vendor("ark", "Volcengine Ark", ArkProvider, sandbox_modules=("ark_images", "ark_tasks")),
    Vendor("dashscope", "DashScope", DashScopeProvider, sandbox_modules=("dashscope",)),
    Vendor("anthropic", "Anthropic", AnthropicProvider, sandbox_modules=("anthropic",)),
)


@cache
def vendors() -> dict[str, Vendor]:
    """Every registered vendor by protocol name, the settings' entries over the defaults."""
    entries = {vendor.protocol: vendor for vendor in VENDORS}
    for protocol, path in getattr(settings, "STUDIO_PROVIDERS", {}).items():
        entry = import_string(path)
        if not isinstance(entry, Vendor) or entry.protocol != protocol:
            raise TypeError(f"STUDIO_PROVIDERS['{protocol}'] must name a Vendor entry for '{protocol}'")
        entries[protocol] = entry
    return entries


def vendor(protocol: str) -> Vendor:
    try:
        return vendors()[protocol]
    except KeyError:
        raise NoUpstream(f"no adapter is registered for protocol '{protocol}'") from None


def protocol_choices() -> list[tuple[str, str]]:
    """The protocols an operator may configure an upstream with (the sandbox last)."""
    return [(v.protocol, v.label) for v in vendors().values()] + [(SANDBOX, "Built-in sandbox")]


def sandbox_modules() -> tuple[str, ...]:
    return tuple(name for v in vendors().values() for name in v.sandbox_modules)


def effective_protocol(upstream: UpstreamEntry, model: ModelEntry) -> str:
    """The sandbox speaks every protocol; for it the model's own protocol is used."""
    if upstream.protocol == SANDBOX:
        return model.default_protocol
    return upstream.protocol


def vendor_for(upstream: UpstreamEntry, model: ModelEntry) -> Vendor:
    return vendor(effective_protocol(upstream, model))


def supports(upstream: UpstreamEntry, model: ModelEntry, capability: Capability) -> bool:
    entry = vendors().get(effective_protocol(upstream, model))
    return entry is not None and capability in entry.capabilities


def missing(model: ModelEntry, capability: Capability, protocols: Iterable[str] = ()) -> CapabilityMissing:
    spoken = ", ".join(sorted(set(protocols))) or "none"
    return CapabilityMissing(f"model '{model.model_id}' cannot be used for {CAPABILITY_NAMES[capability]}: "
                             f"its upstream protocol ({spoken}) does not offer it")


def capable(upstreams: Iterable[UpstreamEntry], model: ModelEntry, capability: Capability) -> list[UpstreamEntry]:
    """The upstreams (in order) whose protocol has ``capability``; ``CapabilityMissing`` if none has."""
    upstreams = list(upstreams)
    found = [up for up in upstreams if supports(up, model, capability)]
    if upstreams and not found:
        raise missing(model, capability, (effective_protocol(up, model) for up in upstreams))
    return found


def _provider(upstream: UpstreamEntry, model: ModelEntry, capability: Capability) -> Provider:
    entry = vendor_for(upstream, model)
    if capability not in entry.capabilities:
        raise missing(model, capability, (entry.protocol,))
    return entry.provider(upstream, deadlines=deadlines_for(capability))


def native_upstream(upstream: UpstreamEntry, model: ModelEntry) -> NativeImageUpstream:
    return cast(NativeImageUpstream, _provider(upstream, model, Capability.NATIVE_IMAGE))


def images_upstream(upstream: UpstreamEntry, model: ModelEntry) -> ImagesUpstream:
    return cast(ImagesUpstream, _provider(upstream, model, Capability.IMAGES))


def text_upstream(upstream: UpstreamEntry, model: ModelEntry) -> TextUpstream:
    return cast(TextUpstream, _provider(upstream, model, Capability.TEXT))


def token_count_upstream(upstream: UpstreamEntry, model: ModelEntry) -> TokenCountUpstream:
    return cast(TokenCountUpstream, _provider(upstream, model, Capability.TOKEN_COUNT))


def embeddings_upstream(upstream: UpstreamEntry, model: ModelEntry,
                        capability: Capability = Capability.EMBEDDINGS) -> EmbeddingsUpstream:
    """``capability``: ``EMBEDDING_TOKENS`` for a job whose inputs are token ids."""
    return cast(EmbeddingsUpstream, _provider(upstream, model, capability))


def video_upstream(protocol: str, upstream: UpstreamEntry) -> VideoTaskUpstream:
    """The provider polling, cancelling or hearing back about a task created over ``protocol``."""
    entry = vendor(protocol)
    if Capability.VIDEO_TASKS not in entry.capabilities:
        raise NoUpstream(f"protocol '{protocol}' has no video tasks")
    return cast(VideoTaskUpstream, entry.provider(upstream, deadlines=deadlines_for(Capability.VIDEO_TASKS)))

