"""The named events a relay sends as they came, by format.

They are the text deltas (``StreamedText`` counts their text from the bytes) and the events that
carry no model, no usage, no response object and no text field of the counter's (messages: a
block's end, a ping, the stream's end; responses: the ``….added`` and ``….done`` events of an
output item or its parts). Any other event (``message_start``, ``message_delta``,
``response.created``, ``error``, …) gets a look of its own, and so does a name that is not ASCII
(how many bytes it took is not known from the decoded name).
"""

from __future__ import annotations

from collections.abc import Callable

MESSAGES = frozenset({"content_block_delta", "content_block_stop", "ping", "message_stop"})
RESPONSES = (".delta", ".added", ".done")
NAMES_KEPT = 256


class Verdicts(dict[str, bool]):
    """``verdicts[name]``: whether events of that name go as they came; worked out once a name
    (a stream repeats a few names), for up to ``NAMES_KEPT`` names."""

    def __init__(self, passes: Callable[[str], bool]) -> None:
        super().__init__()
        self.passes = passes

    def __missing__(self, name: str) -> bool:
        verdict = name.isascii() and self.passes(name)
        if len(self) < NAMES_KEPT:
            self[name] = verdict
        return verdict


BY_FORMAT: dict[str, Verdicts] = {
    "messages": Verdicts(MESSAGES.__contains__),
    "responses": Verdicts(lambda name: name.endswith(RESPONSES)),
}
