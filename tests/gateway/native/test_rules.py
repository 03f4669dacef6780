"""Native request rules: every refusal names the field as the client spelled it."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from studio.core.errors import BadRequest
from studio.gateway.native.rules import field_of, validate, validate_count, validate_inline
from tests.gateway.catalog import model_entry

FLASH = model_entry("delta-3.1-flash-image")
LITE = model_entry("delta-3.1-flash-lite-image")  # at most 3 reference images, 1K only


def png_b64() -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), "teal").save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode()


PNG = png_b64()


def body(*parts, **extra) -> dict:
    return {"contents": [{"role": "user", "parts": list(parts) or [{"text": "a cat"}]}], **extra}


def refused(param: str, request, model=FLASH) -> BadRequest:
    with pytest.raises(BadRequest) as exc:
        validate(request, model)
    assert exc.value.param == param, (exc.value.param, exc.value.message)
    assert exc.value.status == 400
    return exc.value


def test_a_plain_request_with_unknown_fields_passes() -> None:
    validate(body(futureField={"x": 1}, generationConfig={"responseModalities": ["Image", "text"],
                                                           "imageConfig": {"imageSize": "4K", "aspectRatio": "16:9"},
                                                           "temperature": 0.3}), FLASH)


def test_body_shape_and_contents_are_required() -> None:
    refused("body", ["not", "an", "object"])
    refused("contents", {})
    refused("contents", {"contents": []})
    refused("model", body(model="delta-3.1-flash-image"))


def test_content_role_and_parts() -> None:
    refused("contents[0].role", {"contents": [{"role": "system", "parts": [{"text": "x"}]}]})
    refused("contents[0].parts", {"contents": [{"role": "user", "parts": []}]})
    refused("contents[0]", {"contents": ["text"]})
    refused("contents[0].parts[1]", body({"text": "ok"}, {"unknown": 1}))
    refused("contents[0].parts[0].text", body({"text": 5}))
    refused("contents[0].parts[0].thought_signature", body({"text": "x", "thought_signature": 5}))


def test_inline_image_fields_use_the_clients_spelling() -> None:
    refused("contents[0].parts[0].inline_data.mime_type",
            body({"inline_data": {"mime_type": "text/plain", "data": PNG}}))
    err = refused("contents[0].parts[0].inlineData.mimeType", body({"inlineData": {"mimeType": "image/jpeg",
                                                                                  "data": PNG}}))
    assert err.code == "mime_type_mismatch" and "image/png" in err.message
    refused("contents[0].parts[0].inlineData.data", body({"inlineData": {"mimeType": "image/png", "data": ""}}))
    refused("contents[0].parts[0].inlineData.data",
            body({"inlineData": {"mimeType": "image/png", "data": "data:image/png;base64," + PNG}}))
    refused("contents[0].parts[0].inlineData.mimeType", body({"inlineData": {"data": PNG}}))


def test_file_data_needs_a_uri() -> None:
    validate(body({"fileData": {"mimeType": "image/png", "fileUri": "https://x.test/a.png"}}), FLASH)
    refused("contents[0].parts[0].file_data.fileUri", body({"file_data": {"mime_type": "image/png"}}))


def test_reference_image_limit_is_per_model_catalog_data() -> None:
    images = [{"inlineData": {"mimeType": "image/png", "data": PNG}} for _ in range(4)]
    validate(body({"text": "combine"}, *images), FLASH)
    err = refused("contents[0].parts", body({"text": "combine"}, *images), LITE)
    assert "at most 3" in err.message
    # Images the model made earlier (model turns) do not count against the reference limit.
    validate({"contents": [{"role": "model", "parts": images}, {"role": "user", "parts": [{"text": "again"}]}]},
             LITE)


def test_generation_config_rules() -> None:
    refused("generationConfig", body(generationConfig=[]))
    refused("generationConfig.responseModalities", body(generationConfig={"responseModalities": ["AUDIO"]}))
    refused("generation_config.response_modalities", body(generation_config={"response_modalities": []}))
    refused("generationConfig.imageConfig", body(generationConfig={"imageConfig": "4K"}))
    err = refused("generationConfig.imageConfig.imageSize", body(generationConfig={"imageConfig": {"imageSize": "1k"}}))
    assert "512, 1K, 2K, 4K" in err.message
    refused("generationConfig.image_config.aspect_ratio",
            body(generationConfig={"image_config": {"aspect_ratio": "16x9"}}))
    refused("generationConfig.imageConfig.imageSize", body(generationConfig={"imageConfig": {"imageSize": "4K"}}), LITE)


def test_system_instruction_roles_are_free_but_parts_are_checked() -> None:
    validate(body(systemInstruction={"role": "system", "parts": [{"text": "be brief"}]}), FLASH)
    refused("system_instruction.parts", body(system_instruction={"parts": []}))


def test_field_of_prefers_camel_case() -> None:
    assert field_of({"imageSize": "1K", "image_size": "2K"}, "imageSize", "image_size") == ("imageSize", "1K")
    assert field_of({"image_size": "2K"}, "imageSize", "image_size") == ("image_size", "2K")
    assert field_of({}, "imageSize", "image_size") == (None, None)


def test_validate_inline_refuses_non_objects() -> None:
    with pytest.raises(BadRequest) as exc:
        validate_inline("aGk=", "contents[2].parts[0].inlineData")
    assert exc.value.param == "contents[2].parts[0].inlineData"


def test_a_count_takes_contents_or_a_generate_request_each_content_checked_as_generation_checks_it() -> None:
    validate_count(body())
    validate_count({"generateContentRequest": body(generationConfig={"imageConfig": {"imageSize": "9K"}})})
    validate_count({"contents": []})  # nothing to count is the vendor's own answer to give
    cases = [({"contents": [1]}, "contents[0]"), ({"contents": [{"parts": "x"}]}, "contents[0].parts"),
             ({"contents": [{"role": ["user"], "parts": [{"text": "a"}]}]}, "contents[0].role"),
             ({"contents": "x"}, "contents"), ({}, "contents"), ([], "body"),
             ({"generateContentRequest": {"contents": [{"parts": [{"text": 5}]}]}},
              "generateContentRequest.contents[0].parts[0].text"),
             ({"generateContentRequest": {}}, "generateContentRequest.contents")]
    for request, param in cases:
        with pytest.raises(BadRequest) as exc:
            validate_count(request)
        assert exc.value.param == param, (request, exc.value.param, exc.value.message)
