"""Merging native answers: parts across frames, usage, final images versus thoughts, block reasons."""

from __future__ import annotations

from studio.gateway.native.result import NativeResult, inline_data, prompt_of, usage_counts


def chunk(*parts, finish=None, usage=None, index=0, **extra) -> dict:
    candidate = {"content": {"role": "model", "parts": list(parts)}, "index": index}
    if finish:
        candidate["finishReason"] = finish
    out = {"candidates": [candidate], **extra}
    if usage:
        out["usageMetadata"] = usage
    return out


IMG = {"inlineData": {"mimeType": "image/webp", "data": "aW1n"}}


def test_streamed_parts_are_concatenated_in_order() -> None:
    result = NativeResult()
    assert result.add(chunk({"text": "Here "})) == [{"text": "Here "}]
    result.add(chunk({"text": "it is"}, IMG, finish="STOP", usage={"totalTokenCount": 9}, modelVersion="v2",
                     responseId="r9"))
    assert result.text == "Here it is"
    assert [p.get("text") for p in result.parts] == ["Here ", "it is", None]
    assert (result.finish_reason, result.model_version, result.response_id) == ("STOP", "v2", "r9")
    assert result.usage == {"totalTokenCount": 9}


def test_later_usage_replaces_earlier_and_missing_fields_keep_values() -> None:
    result = NativeResult()
    result.add(chunk({"text": "a"}, usage={"totalTokenCount": 3}, modelVersion="v1"))
    result.add(chunk({"text": "b"}, usage={"totalTokenCount": 7}))
    assert result.usage == {"totalTokenCount": 7} and result.model_version == "v1"


def test_other_candidates_and_odd_shapes_are_skipped() -> None:
    result = NativeResult()
    result.add(chunk({"text": "second"}, index=1))
    result.add({"candidates": "nonsense"})
    result.add({"candidates": [None, {"content": "x"}, {"content": {"parts": [1, "two", {"text": "ok"}]}}]})
    assert result.text == "ok"


def test_thoughts_are_not_visible_text_nor_final_images() -> None:
    result = NativeResult()
    thought_image = {**IMG, "thought": True}
    result.add(chunk({"text": "pondering", "thought": True}, thought_image, {"text": "Done"}, IMG))
    assert result.text == "Done"
    finals = result.final_images()
    assert [(i.part_index, i.thought, i.mime) for i in finals] == [(3, False, "image/webp")]
    assert len(result.images(include_thoughts=True)) == 2
    assert finals[0].decode() == b"img"


def test_an_only_image_marked_as_thought_is_the_final_one() -> None:
    result = NativeResult()
    result.add(chunk({**IMG, "thought": True}, {"inline_data": {"data": "c2Vjb25k"}, "thought": True}))
    finals = result.final_images()
    assert len(finals) == 1 and finals[0].part_index == 1 and finals[0].mime == "image/png"
    assert result.block_reason == ""


def test_block_reason_prefers_prompt_feedback_then_finish_reason() -> None:
    blocked = NativeResult()
    blocked.add({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}})
    assert blocked.block_reason == "PROHIBITED_CONTENT"
    safety = NativeResult()
    safety.add(chunk({"text": "no"}, finish="IMAGE_SAFETY"))
    assert safety.block_reason == "IMAGE_SAFETY"
    assert NativeResult().block_reason == "NO_IMAGE"


def test_inline_data_accepts_both_spellings() -> None:
    assert inline_data({"inline_data": {"data": "x"}}) == {"data": "x"}
    assert inline_data({"inlineData": "not an object"}) is None
    assert inline_data({"text": "t"}) is None


def test_prompt_of_is_the_last_user_turn_text() -> None:
    body = {"contents": [
        {"role": "user", "parts": [{"text": "first"}]},
        {"role": "model", "parts": [{"text": "reply"}]},
        {"parts": [{"text": "make it"}, IMG, {"text": "blue"}]},  # role defaults to user
    ]}
    assert prompt_of(body) == "make it blue"
    assert prompt_of({"contents": [{"role": "model", "parts": [{"text": "x"}]}]}) == ""
    assert prompt_of({}) == ""


def test_usage_counts_derive_output_from_the_total() -> None:
    assert usage_counts({"promptTokenCount": 5, "candidatesTokenCount": 1120, "totalTokenCount": 1400}) == \
        (5, 1395, 1400)
    assert usage_counts({"promptTokenCount": 5, "candidatesTokenCount": 20, "totalTokenCount": 10}) == (5, 20, 10)
    assert usage_counts({}) == (0, 0, 0)
