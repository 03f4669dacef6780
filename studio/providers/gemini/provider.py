"""Gemini API protocol: ``models/{m}:generateContent`` and ``:streamGenerateContent?alt=sse``.

Bodies go out as the client sent them (only the model moves into the path); answers come back
as raw bytes so unknown fields survive and nothing is re-encoded on the way to the client. A
4K image answer is one 10-20 MB frame: it is read into one buffer and handed on as that buffer
(see ``gemini_sse``), never copied or parsed here.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

from studio.core.errors import UpstreamError
from studio.core.open_frames import FramePart
from studio.providers.base import BaseUrlRule, Provider, json_body
from studio.providers.bodies import read_pieces
from studio.providers.contracts import Capability
from studio.providers.gemini.embeddings import GeminiEmbeddingsMixin
from studio.providers.gemini.errors import map_error
from studio.providers.gemini.images import GeminiImagesMixin
from studio.providers.gemini.sse import iter_frames

_JSON_OBJECT = re.compile(rb"\s*\{")
_JSON_OBJECT_END = re.compile(rb"\}\s*\Z")
_ERROR_EVENT = re.compile(rb'\s*\{\s*"error"\s*:')


class GeminiProvider(GeminiImagesMixin, GeminiEmbeddingsMixin, Provider):
    """Native image generation, the standard images API by translation (``gemini/images.py``) and
    embeddings (``gemini/embeddings.py``)."""

    protocol = "gemini"
    capabilities = frozenset({Capability.NATIVE_IMAGE, Capability.IMAGES, Capability.EMBEDDINGS})
    # ``…/v1beta``, ``…/v1``, ``…/v1alpha`` or a bare host.
    base_url = BaseUrlRule("/v1beta", re.compile(r"/v1(beta\d*|alpha)?$"))
    error_mapping = staticmethod(map_error)

    def auth_headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.upstream.credential}

    def model_path(self, upstream_model: str, method: str) -> str:
        return f"/models/{upstream_model}:{method}"

    def check_path(self) -> str:
        return "/models?pageSize=1"

    async def generate_content(self, upstream_model: str, body: bytes) -> bytearray:
        """The whole JSON answer in one buffer: the pieces as they arrived, joined once (growing a
        buffer piece by piece would copy it again each time it has to move). A buffer of its own,
        so the model's name and the cost near its end are set in place (``native.version``,
        ``native.record.with_cost``), not by copying the answer around them."""
        path = self.model_path(upstream_model, "generateContent")
        async with self.stream("POST", path, content=body, headers={"content-type": "application/json"}) as resp:
            answer = bytearray().join(await read_pieces(resp))
        # Checked at both ends only (the answer may hold megabytes of images): a body that is
        # cut short or is not JSON is the upstream's failure, never relayed as a success.
        if not _JSON_OBJECT.match(answer) or not _JSON_OBJECT_END.search(answer[-64:]):
            raise UpstreamError(f"upstream '{self.upstream.name}' answered 200 without a JSON object",
                                details={"upstream_status": 200})
        return answer

    async def count_tokens(self, upstream_model: str, body: bytes) -> bytes:
        path = self.model_path(upstream_model, "countTokens")
        response = await self.request("POST", path, content=body, headers={"content-type": "application/json"})
        return response.content

    async def stream_generate_content(self, upstream_model: str, body: bytes, *,
                                      passing: bool = False) -> AsyncIterator[bytearray | FramePart]:
        """Yield the JSON data of each SSE event as it arrives (no ``[DONE]`` in this protocol);
        with ``passing``, a big frame as the parts of an open frame (``studio.core.open_frames``)."""
        path = self.model_path(upstream_model, "streamGenerateContent") + "?alt=sse"
        sent = False
        async with self.stream("POST", path, content=body, headers={"content-type": "application/json"}) as resp:
            async for frame in iter_frames(resp.aiter_bytes(), passing=passing):
                if type(frame) is not bytearray:  # a part of an open frame: answer data, not an error
                    sent = True
                    yield frame
                    continue
                if len(frame) <= 8 and (not frame.strip() or frame == b"[DONE]"):  # some relays add it
                    continue
                if _ERROR_EVENT.match(frame):
                    # An error reported inside the stream: typed like an HTTP error of that code.
                    error = json_body(bytes(frame)).get("error")
                    code = error.get("code") if isinstance(error, dict) else None
                    raise self.error_from_response(code if isinstance(code, int) and code >= 400 else 500,
                                                   bytes(frame))
                sent = True
                yield frame
        if not sent:
            raise UpstreamError(f"upstream '{self.upstream.name}' ended the stream without any response",
                                details={"upstream_status": 200})
