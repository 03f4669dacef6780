"""Images request rules read from the catalog: each refusal names its field."""

from __future__ import annotations

import pytest

from studio.core.errors import BadRequest
from studio.gateway.images import rules
from tests.gateway.catalog import model_entry

KAPPA = model_entry("kappa-image-1")
SIGMA = model_entry("sigma-5.0-image")
DELTA = model_entry("delta-3.1-flash-image")


def refused(fields: dict, model=KAPPA, family="standard", param: str = "", code: str = "") -> BadRequest:
    with pytest.raises(BadRequest) as exc:
        rules.validate(fields, model, family, prompt_required=True)
    assert exc.value.param == param, (exc.value.param, exc.value.message)
    if code:
        assert exc.value.code == code
    return exc.value


def test_valid_request_returns_the_prompt():
    assert rules.validate({"prompt": "a kite", "quality": "high", "n": 10, "size": "auto", "output_format": "webp",
                           "output_compression": 50, "future": 1}, KAPPA, "standard", prompt_required=True) == "a kite"
    assert rules.validate({}, SIGMA, "layered", prompt_required=False) == ""


def test_prompt():
    refused({}, param="prompt", code="missing_required_parameter")
    refused({"prompt": "  "}, param="prompt")
    refused({"prompt": 3}, param="prompt", code="invalid_type")


def test_enums_from_capabilities():
    err = refused({"prompt": "p", "quality": "ultra"}, param="quality", code="invalid_value")
    assert "'low', 'medium', 'high', 'auto'" in err.message
    refused({"prompt": "p", "style": "vivid"}, SIGMA, "layered", param="style", code="unsupported_parameter")
    refused({"prompt": "p", "response_format": "png"}, param="response_format")
    refused({"prompt": "p", "optimize_prompt_options": {"mode": "slow"}}, SIGMA, "layered",
            param="optimize_prompt_options.mode")


def test_integers_and_their_ranges():
    refused({"prompt": "p", "n": 11}, param="n", code="integer_out_of_range")
    refused({"prompt": "p", "n": True}, param="n", code="invalid_type")
    refused({"prompt": "p", "output_compression": 101, "output_format": "jpeg"}, param="output_compression")
    refused({"prompt": "p", "partial_images": 4}, param="partial_images")
    refused({"prompt": "p", "sequential_image_generation_options": {"max_images": 16}}, SIGMA, "layered",
            param="sequential_image_generation_options.max_images")


def test_booleans_need_their_capability():
    refused({"prompt": "p", "watermark": True}, param="watermark", code="unsupported_parameter")
    rules.validate({"prompt": "p", "watermark": False}, KAPPA, "standard", prompt_required=True)
    refused({"prompt": "p", "stream": "yes"}, param="stream", code="invalid_type")


def test_sizes_per_family():
    refused({"prompt": "p", "size": "512x512"}, param="size")
    refused({"prompt": "p", "size": 1024}, param="size", code="invalid_type")
    rules.validate({"prompt": "p", "size": "2K"}, SIGMA, "layered", prompt_required=True)
    rules.validate({"prompt": "p", "size": "2048x2048"}, SIGMA, "layered", prompt_required=True)
    refused({"prompt": "p", "size": "500x500"}, SIGMA, "layered", param="size")  # too few pixels
    refused({"prompt": "p", "size": "4000x240"}, SIGMA, "layered", param="size")  # ratio beyond 16:1
    rules.validate({"prompt": "p", "size": "1536x1024"}, DELTA, "native", prompt_required=True)
    refused({"prompt": "p", "size": "1000x100"}, DELTA, "native", param="size")


def test_combinations():
    refused({"prompt": "p", "background": "transparent", "output_format": "jpeg"}, param="background")
    refused({"prompt": "p", "output_compression": 80, "output_format": "png"}, param="output_compression")
    rules.validate({"prompt": "p", "partial_images": 2}, KAPPA, "standard", prompt_required=True)


def test_lookup_walks_dotted_names():
    assert rules.lookup({"a": {"b": 3}}, "a.b") == 3
    assert rules.lookup({"a": 3}, "a.b") is None and rules.lookup({}, "a") is None
