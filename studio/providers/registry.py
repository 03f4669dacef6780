"""One explicit registry: protocol name → provider class (Django's backend pattern).

``settings.STUDIO_PROVIDERS`` may extend or replace entries with dotted paths. Nothing else in
the code base branches on a vendor.
"""

from __future__ import annotations

from functools import cache

from django.conf import settings
from django.utils.module_loading import import_string

from studio.gateway.errors import NoUpstream
from studio.gateway.snapshot import ModelEntry, UpstreamEntry

from .base import Provider

DEFAULT_PROVIDERS: dict[str, str] = {
    "gemini": "studio.providers.gemini.GeminiProvider",
    "openai": "studio.providers.openai.OpenAIProvider",
    "ark": "studio.providers.ark.ArkProvider",
    "dashscope": "studio.providers.dashscope.DashScopeProvider",
    "anthropic": "studio.providers.anthropic.AnthropicProvider",
}


@cache
def provider_class(protocol: str) -> type[Provider]:
    paths = {**DEFAULT_PROVIDERS, **getattr(settings, "STUDIO_PROVIDERS", {})}
    try:
        return import_string(paths[protocol])
    except KeyError:
        raise NoUpstream(f"no adapter is registered for protocol '{protocol}'") from None


def effective_protocol(upstream: UpstreamEntry, model: ModelEntry) -> str:
    """The sandbox speaks every protocol; for it the model's own protocol is used."""
    if upstream.protocol == "sandbox":
        return model.default_protocol
    return upstream.protocol


def provider_for(upstream: UpstreamEntry, model: ModelEntry) -> Provider:
    return provider_class(effective_protocol(upstream, model))(upstream)
