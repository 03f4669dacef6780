"""What the gateway's translations write into a conversation that a vendor of the client's own
format does not take, left out of a same-format call.

A client that talked to a model of another format through a translation holds what that
translation wrote, and sends it back when it goes on with a model of its own format (Codex's
``/model``, an agent switching models mid-conversation). The vendor refuses what it never made:

- responses: the reasoning items a translation wrote (``responses_to_chat.own_reasoning``);
  OpenAI answers an item it never stored with a 404, content it cannot verify with a 400;
- chat: the signed ``thinking_blocks`` of a Claude answer, and ``reasoning_content`` for a model
  that takes no reasoning back (``Context.takes_reasoning``;
  ``chat_to_messages.without_thinking_fields``); OpenAI answers each with its 400 "Unknown
  parameter";
- messages: the thinking blocks the gateway signed for a chat upstream's reasoning
  (``messages_to_chat.without_own_thinking``); Anthropic answers a signature it did not make with
  its 400 "Invalid `signature` in `thinking` block".

``held`` is asked once per call, where the raw body allows with a substring check alone, so a
call that holds none of them costs no walk of its conversation.
"""

from __future__ import annotations

from typing import Any

from studio.gateway.text import chat_to_messages, messages_to_chat, responses_to_chat


def held(fmt: str, body: dict[str, Any], raw: bytes | None, takes_reasoning: bool) -> bool:
    """Whether ``body`` (its request's ``raw`` JSON, when it is the client's own) holds any."""
    if fmt == "chat":
        return chat_to_messages.holds_thinking_fields(body, raw, takes_reasoning)
    if fmt == "responses":
        return responses_to_chat.holds_own_reasoning(body, raw)
    return fmt == "messages" and messages_to_chat.holds_own_thinking(body, raw)


def without(fmt: str, body: dict[str, Any], takes_reasoning: bool) -> dict[str, Any]:
    """``body`` with them left out (a new dictionary; ``body`` is the client's)."""
    if fmt == "chat":
        return {**body, "messages": chat_to_messages.without_thinking_fields(body["messages"], takes_reasoning)}
    if fmt == "responses":
        return {**body, "input": responses_to_chat.without_own_reasoning(body["input"])}
    if fmt == "messages":
        return messages_to_chat.without_own_thinking(body)
    return body
