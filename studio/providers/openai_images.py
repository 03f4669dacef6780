"""OpenAI Images protocol calls (mixed into ``OpenAIProvider``)."""


class OpenAIImagesMixin:
    pass
