"""What an upstream can do, as typed contracts the engine calls.

Each capability an upstream protocol may have is a ``typing.Protocol`` over neutral values (raw
bytes for the wire formats relayed as they are, the core's ``ImageJob``/``ImageResult``/
``ImageEvent`` and ``UpstreamVideoState`` for the others). A provider class says which ones it
implements in ``capabilities``; the registry checks at registration that the class really has
each contract's members, and hands the engine a provider typed as the contract the route needs
(``registry.native_upstream`` and friends), or raises ``CapabilityMissing`` before any call. The
engine never asks a provider object what it happens to have.

Wire formats are named the way the engine names its inbound families: text ``chat``,
``messages``, ``responses``; video ``ark`` (protocol A), ``dashscope`` (protocol B), ``generic``
(protocol C). A provider declares the formats it speaks natively; the engine's pair modules
translate between formats, keyed by (inbound format, upstream format), never by vendor.
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from studio.core.embeddings import EmbeddingJob, EmbeddingResult
from studio.core.entries import UpstreamEntry
from studio.core.images import ImageEvent, ImageJob, ImageResult
from studio.core.open_frames import FramePart
from studio.core.video_states import UpstreamVideoState, VideoStatus
from studio.providers.sse import Read


class Capability(enum.StrEnum):
    NATIVE_IMAGE = "native_image"  # generateContent / streamGenerateContent (the native family)
    IMAGES = "images"  # the standard images API: generations and edits
    TEXT = "text"  # one or more text wire formats
    VIDEO_TASKS = "video_tasks"  # asynchronous video tasks
    TOKEN_COUNT = "token_count"  # counting a messages request's input tokens without generating
    EMBEDDINGS = "embeddings"  # text embeddings (OpenAI's /embeddings, Gemini's batchEmbedContents)
    EMBEDDING_TOKENS = "embedding_tokens"  # embeddings of inputs given as token ids (OpenAI's /embeddings)


class Upstream(Protocol):
    """Every provider: bound to one configured upstream."""

    protocol: ClassVar[str]
    capabilities: ClassVar[frozenset[Capability]]
    upstream: UpstreamEntry


class NativeImageUpstream(Upstream, Protocol):
    """The native image protocol: bodies go out and answers come back as raw JSON bytes."""

    async def generate_content(self, upstream_model: str, body: bytes) -> bytes | bytearray:
        """The whole JSON answer."""
        ...

    def stream_generate_content(self, upstream_model: str, body: bytes, *,
                                passing: bool = False) -> AsyncIterator[bytes | bytearray | FramePart]:
        """The JSON data of each streamed event, as it arrives; with ``passing``, a big frame may
        come as the parts of an open frame (``studio.core.open_frames``)."""
        ...

    async def count_tokens(self, upstream_model: str, body: bytes) -> bytes:
        """The vendor's ``countTokens`` answer for a request body, as JSON bytes."""
        ...


class ImagesUpstream(Upstream, Protocol):
    """Standard images: ``job.route`` says generations or edits; buffered or as events."""

    async def images_run(self, job: ImageJob, upstream_model: str) -> ImageResult: ...

    def images_stream(self, job: ImageJob, upstream_model: str) -> AsyncIterator[ImageEvent]: ...


class TextUpstream(Upstream, Protocol):
    """Text in the wire formats listed in ``text_formats`` (bodies and answers as bytes).

    ``headers`` are the client's own protocol headers forwarded on a same-format call (the
    messages format's ``anthropic-beta``), added to the vendor's auth headers.
    """

    text_formats: ClassVar[tuple[str, ...]]

    async def text_request(self, fmt: str, body: bytes, headers: Mapping[str, str] | None = None) -> bytes: ...

    def text_stream(self, fmt: str, body: bytes,
                    headers: Mapping[str, str] | None = None) -> AsyncIterator[Read]:
        """The answer's events (the end marker left out), as the events of each read of the
        answer: a relay sends a read's events on together, as a byte relay would (and, where a
        read is lone data lines and nothing else, its bytes as they came: ``Read.raw``)."""


class TokenCountUpstream(Upstream, Protocol):
    """The vendor's own count of a messages request's input tokens (``{"input_tokens": N}``)."""

    async def count_tokens(self, body: bytes, headers: Mapping[str, str] | None = None) -> bytes: ...


class EmbeddingsUpstream(Upstream, Protocol):
    """Text embeddings: one vector per input, in input order, with the input tokens counted."""

    async def embed(self, job: EmbeddingJob, upstream_model: str) -> EmbeddingResult: ...


@dataclass(frozen=True, slots=True)
class CallbackRecord:
    """A task record an upstream posted to the gateway's callback address."""

    upstream_task_id: str
    state: UpstreamVideoState


class VideoTaskUpstream(Upstream, Protocol):
    """Asynchronous video tasks in the video wire format ``video_format``."""

    video_format: ClassVar[str]
    # The create-body field the upstream posts task records to; None: it has no callbacks.
    callback_field: ClassVar[str | None]
    video_states: ClassVar[Mapping[str, VideoStatus]]

    async def video_create(self, body: dict[str, Any]) -> str:
        """The upstream's task id."""
        ...

    async def video_get(self, task_id: str) -> dict[str, Any]: ...

    async def video_cancel(self, task_id: str) -> None: ...

    def video_state(self, record: dict[str, Any]) -> UpstreamVideoState: ...

    def parse_callback(self, payload: Any) -> CallbackRecord:
        """A posted record; a 400 (``BadRequest``) when it is not one."""
        ...


CONTRACTS: dict[Capability, type] = {
    Capability.NATIVE_IMAGE: NativeImageUpstream,
    Capability.IMAGES: ImagesUpstream,
    Capability.TEXT: TextUpstream,
    Capability.VIDEO_TASKS: VideoTaskUpstream,
    Capability.TOKEN_COUNT: TokenCountUpstream,
    Capability.EMBEDDINGS: EmbeddingsUpstream,
    Capability.EMBEDDING_TOKENS: EmbeddingsUpstream,
}


def contract_members(contract: type) -> frozenset[str]:
    """The names a class must have to satisfy a contract (its own and its bases' members)."""
    names: set[str] = set()
    for klass in contract.__mro__:
        if klass.__module__ != __name__:  # object, Protocol, Generic
            continue
        names |= {n for n in vars(klass) if not n.startswith("_")}
        names |= set(klass.__dict__.get("__annotations__", {}))
    return frozenset(names)
