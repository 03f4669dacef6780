"""OpenAI chat completions and responses calls (mixed into ``OpenAIProvider``)."""


class OpenAITextMixin:
    pass
