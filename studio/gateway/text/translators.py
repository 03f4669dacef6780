"""Which translator serves a call: the pair modules keyed by (client format, upstream format).

A format the upstream speaks natively is never translated; otherwise a direct pair, or a chain
through chat, which every format translates to and from.
"""

from __future__ import annotations

from studio.core.errors import CapabilityMissing
from studio.gateway.text import chat_to_messages, messages_to_chat, responses_to_chat
from studio.gateway.text.translation import Chain, Translator


def _pairs() -> dict[tuple[str, str], Translator]:
    pairs: dict[tuple[str, str], Translator] = {}
    for module in (chat_to_messages, messages_to_chat, responses_to_chat):
        translator = module.TRANSLATOR
        pairs[(translator.source, translator.target)] = translator
    return pairs


_cache: dict[tuple[str, str], Translator] = {}


def pair(source: str, target: str) -> Translator | None:
    if not _cache:
        _cache.update(_pairs())
    return _cache.get((source, target))


def plan(client_format: str, upstream_formats: tuple[str, ...]) -> tuple[str, Translator | None]:
    """The format to speak upstream and the translator to get there (None: pass through)."""
    if client_format in upstream_formats:
        return client_format, None
    for target in upstream_formats:
        direct = pair(client_format, target)
        if direct is not None:
            return target, direct
    for middle in ("chat",):  # every format translates to chat, and chat to every format
        first = pair(client_format, middle)
        for target in upstream_formats:
            second = pair(middle, target)
            if first is not None and second is not None:
                return target, Chain(first, second)
    raise CapabilityMissing(f"this model's upstream cannot serve the {client_format} format "
                            f"(it speaks {', '.join(upstream_formats) or 'no text format'})")
