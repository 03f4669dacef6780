"""The named events a relay sends as they came, by format.

They are the text deltas (``StreamedText`` counts their text from the bytes) and the events that
carry no model, no usage, no response object and no text field of the counter's (messages: a
block's end, a ping, the stream's end; responses: the ``….added`` and ``….done`` events of an
output item or its parts). Any other event (``message_start``, ``message_delta``,
``response.created``, ``error``, …) gets a look of its own, and so does a name that is not ASCII
(how many bytes it took is not known from the decoded name).
"""

from __future__ import annotations

from studio.core.memo import Memo

MESSAGES = frozenset({"content_block_delta", "content_block_stop", "ping", "message_stop"})
RESPONSES = (".delta", ".added", ".done")

# ``BY_FORMAT[fmt][name]``: whether events of that name go as they came, worked out once a name.
BY_FORMAT: dict[str, Memo[str, bool]] = {
    "messages": Memo(lambda name: name.isascii() and name in MESSAGES),
    "responses": Memo(lambda name: name.isascii() and name.endswith(RESPONSES)),
}
