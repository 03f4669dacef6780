"""``modelVersion`` names the platform model, changed in place without parsing the frame."""

from __future__ import annotations

import orjson

from studio.gateway.native.version import name_platform_model


def test_the_vendors_model_version_is_replaced_and_the_rest_kept():
    frame = orjson.dumps({"candidates": [{"index": 0}], "usageMetadata": {"totalTokenCount": 3},
                          "modelVersion": "gemini-3.1-flash-image-preview", "responseId": "r1"})
    for buffer in (frame, bytearray(frame)):
        renamed = name_platform_model(buffer, "delta-3.1-flash-image")
        assert orjson.loads(renamed) == {**orjson.loads(frame), "modelVersion": "delta-3.1-flash-image"}


def test_a_bytearray_is_changed_in_place_and_a_frame_without_the_field_is_untouched():
    frame = bytearray(b'{"modelVersion" : "a-much-longer-vendor-model-name","responseId":"x"}')
    assert name_platform_model(frame, "m") is frame and orjson.loads(frame)["modelVersion"] == "m"
    plain = b'{"candidates":[]}'
    assert name_platform_model(plain, "m") is plain
