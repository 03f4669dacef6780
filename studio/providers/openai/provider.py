"""OpenAI protocol: the images API (``openai/images.py``), chat/responses text (``openai/text.py``)
and embeddings (``openai/embeddings.py``)."""

from __future__ import annotations

import re

from studio.providers.base import BaseUrlRule, Provider
from studio.providers.contracts import Capability
from studio.providers.openai.embeddings import OpenAIEmbeddingsMixin
from studio.providers.openai.errors import map_error
from studio.providers.openai.images import OpenAIImagesMixin
from studio.providers.openai.text import OpenAITextMixin


class OpenAIProvider(OpenAIImagesMixin, OpenAITextMixin, OpenAIEmbeddingsMixin, Provider):
    protocol = "openai"
    capabilities = frozenset({Capability.IMAGES, Capability.TEXT, Capability.EMBEDDINGS, Capability.EMBEDDING_TOKENS})
    # ``https://api.openai.com/v1`` or a bare host; OpenAI-compatible relays are configured both ways.
    base_url = BaseUrlRule("/v1", re.compile(r"/v1$"))
    error_mapping = staticmethod(map_error)

    def check_path(self) -> str:
        return "/models"
