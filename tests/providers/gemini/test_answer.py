"""Reading Gemini answers for the standard images API: merged parts, final images, refusals."""

from __future__ import annotations

import base64

from studio.providers.gemini.answer import Answer, inline_image


def part(data: bytes, *, thought: bool = False, key: str = "inlineData") -> dict:
    return {key: {"mimeType": "image/png", "data": base64.b64encode(data).decode()}, "thought": thought}


def chunk(*parts: dict, finish: str | None = None, usage: dict | None = None) -> dict:
    candidate: dict = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    frame: dict = {"candidates": [candidate]}
    if usage:
        frame["usageMetadata"] = usage
    return frame


def test_streamed_chunks_are_concatenated_and_thoughts_are_not_finals():
    answer = Answer()
    assert answer.add(chunk(part(b"draft", thought=True), {"text": "thinking", "thought": True})) != []
    answer.add(chunk({"text": "Here it is."}, part(b"final"), finish="STOP", usage={"totalTokenCount": 9}))
    assert [image.decode() for image in answer.final_images()] == [b"final"]
    assert answer.text == "Here it is." and answer.usage == {"totalTokenCount": 9}


def test_a_lone_thought_image_is_the_final_one():
    answer = Answer()
    answer.add(chunk(part(b"only", thought=True)))
    assert [image.decode() for image in answer.final_images()] == [b"only"]


def test_no_image_says_why():
    blocked = Answer()
    blocked.add({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}})
    assert blocked.final_images() == [] and blocked.block_reason == "PROHIBITED_CONTENT"
    stopped = Answer()
    stopped.add(chunk({"text": "I cannot draw that."}, finish="IMAGE_SAFETY"))
    assert stopped.block_reason == "IMAGE_SAFETY" and stopped.text == "I cannot draw that."
    assert Answer().block_reason == "NO_IMAGE"


def test_odd_shapes_are_skipped():
    answer = Answer()
    assert answer.add(["not", "a", "dict"]) == []
    assert answer.add({"candidates": [{"index": 1, "content": {"parts": [part(b"x")]}}]}) == []
    assert answer.add({"candidates": "nope"}) == []
    assert answer.final_images() == []


def test_url_safe_unpadded_and_snake_case_inline_data():
    raw = bytes(range(250))
    encoded = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    image = inline_image({"inline_data": {"mime_type": "image/webp", "data": encoded}})
    assert image is not None and image.mime == "image/webp" and image.decode() == raw
    assert inline_image({"text": "no image"}) is None
