"""What a same-format call leaves out of a conversation: the chat, responses and messages fields
the gateway's translations wrote, found from the raw body and removed from a copy."""

from __future__ import annotations

import orjson

from studio.gateway.text import own_fields
from studio.gateway.text.messages_to_chat import sign_thinking

USER = {"role": "user", "content": "hi"}
CLAUDE = {"role": "assistant", "content": "Hi.", "reasoning_content": "Greet.",
          "thinking_blocks": [{"type": "thinking", "thinking": "Greet.", "signature": "sig"}]}
OWN_ITEM = {"type": "reasoning", "id": "rs_0_abc", "summary": [], "content": [{"type": "reasoning_text", "text": "x"}]}
VENDOR_ITEM = {"type": "reasoning", "id": "rs_68af0c", "summary": [], "encrypted_content": "gAAAA"}


def test_chat_leaves_out_the_signed_blocks_and_for_a_model_that_cannot_think_the_reasoning():
    body = {"model": "m", "messages": [USER, CLAUDE, USER]}
    assert own_fields.held("chat", body, orjson.dumps(body), True)
    thinking = own_fields.without("chat", body, True)
    assert thinking["messages"][1] == {"role": "assistant", "content": "Hi.", "reasoning_content": "Greet."}
    assert own_fields.without("chat", body, False)["messages"][1] == {"role": "assistant", "content": "Hi."}
    assert body["messages"][1] is CLAUDE and "thinking_blocks" in CLAUDE and thinking["model"] == "m"


def test_responses_leaves_out_its_own_reasoning_items_only():
    body = {"model": "m", "input": [USER, OWN_ITEM, VENDOR_ITEM]}
    assert own_fields.held("responses", body, orjson.dumps(body), True)
    assert own_fields.without("responses", body, True)["input"] == [USER, VENDOR_ITEM]
    assert body["input"] == [USER, OWN_ITEM, VENDOR_ITEM]
    vendor_only = {"model": "m", "input": [USER, VENDOR_ITEM]}
    assert not own_fields.held("responses", vendor_only, orjson.dumps(vendor_only), True)


def test_messages_leaves_out_the_thinking_the_gateway_signed():
    own = {"type": "thinking", "thinking": "Greet.", "signature": sign_thinking("Greet.")}
    claude = {"type": "thinking", "thinking": "Hm.", "signature": "EqQBCkgIARABGAIiQL2x"}
    text = {"type": "text", "text": "Hi."}
    body = {"model": "m", "messages": [USER, {"role": "assistant", "content": [own, text]}, USER,
                                       {"role": "assistant", "content": [claude, text]}, USER]}
    assert own_fields.held("messages", body, orjson.dumps(body), True)
    out = own_fields.without("messages", body, True)["messages"]
    assert out[1]["content"] == [text] and out[3]["content"] == [claude, text]


def test_a_plain_conversation_holds_none():
    for fmt, body in (("chat", {"model": "m", "messages": [USER]}), ("responses", {"model": "m", "input": [USER]}),
                      ("messages", {"model": "m", "messages": [USER, {"role": "assistant", "content": "Hi."}]})):
        assert not own_fields.held(fmt, body, orjson.dumps(body), False)
