"""Which module translates a video body: pairs keyed by (inbound format, upstream format).

Formats are the engine's names for the video wire formats: ``ark`` (protocol A), ``dashscope``
(protocol B), ``generic`` (protocol C). A format the upstream speaks natively is passed through;
the others need a pair module here. Vendors do not appear: an upstream's format comes from its
registry entry.
"""

from __future__ import annotations

from typing import Any, Protocol

from studio.core.entries import ModelEntry, UpstreamEntry
from studio.core.errors import CapabilityMissing
from studio.gateway.video import generic_to_ark, generic_to_dashscope
from studio.models.videos import VideoTask
from studio.providers.registry import vendor, vendor_for


class VideoTranslation(Protocol):
    SOURCE: str
    TARGET: str

    def translate(self, body: dict[str, Any], model_id: str, caps: dict[str, Any]) -> dict[str, Any]: ...

    def record_fields(self, task: VideoTask) -> dict[str, Any]: ...


PAIRS: dict[tuple[str, str], VideoTranslation] = {
    (module.SOURCE, module.TARGET): module for module in (generic_to_ark, generic_to_dashscope)
}


def upstream_format(upstream: UpstreamEntry, model: ModelEntry) -> str | None:
    """The video format the upstream speaks for this model (None: it has no video tasks)."""
    return vendor_for(upstream, model).video_format


def protocol_format(protocol: str) -> str | None:
    """The video format of a registry protocol (a stored task's ``upstream_protocol``)."""
    return vendor(protocol).video_format


def pair(source: str, target: str | None) -> VideoTranslation:
    found = PAIRS.get((source, target or ""))
    if found is None:
        raise CapabilityMissing(f"the {source} video format cannot be served over an upstream that speaks "
                                f"{target or 'no video format'}")
    return found
