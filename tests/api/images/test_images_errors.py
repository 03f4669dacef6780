"""Bad generation requests get a 400/404 in the OpenAI-style body naming the field."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/v1/images/generations"


@pytest.mark.parametrize(("body", "status", "param"), [
    ({"model": "no-such-model", "prompt": "x"}, 404, "model"),
    ({"model": "omicron-4-mini", "prompt": "x"}, 400, "model"),
    ({"model": "alpha-2.5", "prompt": "x"}, 400, "model"),
    ({"prompt": "x"}, 400, "model"),
    ({"model": "kappa-image-1"}, 400, "prompt"),
    ({"model": "kappa-image-1", "prompt": "x", "n": 0}, 400, "n"),
    ({"model": "kappa-image-1", "prompt": "x", "n": 11}, 400, "n"),
    ({"model": "delta-3.1-flash-image", "prompt": "x", "n": 2}, 400, "n"),
    ({"model": "kappa-image-1", "prompt": "x", "size": "999x999"}, 400, "size"),
    ({"model": "delta-3.1-flash-lite-image", "prompt": "x", "size": "2048x2048"}, 400, "size"),
    ({"model": "delta-3-pro-image", "prompt": "x", "size": "1000x100"}, 400, "size"),
    ({"model": "sigma-5.0-image", "prompt": "x", "size": "100x100"}, 400, "size"),
    ({"model": "kappa-image-1", "prompt": "x", "quality": "ultra"}, 400, "quality"),
    ({"model": "kappa-image-1", "prompt": "x", "output_format": "gif"}, 400, "output_format"),
    ({"model": "kappa-image-1", "prompt": "x", "background": "transparent", "output_format": "jpeg"}, 400,
     "background"),
    ({"model": "kappa-image-1", "prompt": "x", "output_compression": 101, "output_format": "jpeg"}, 400,
     "output_compression"),
    ({"model": "kappa-image-1", "prompt": "x", "partial_images": 4}, 400, "partial_images"),
    ({"model": "kappa-image-1", "prompt": "x", "response_format": "png"}, 400, "response_format"),
    ({"model": "kappa-image-1", "prompt": "x", "layer_decomposition": True}, 400, "layer_decomposition"),
    ({"model": "kappa-image-1", "prompt": "x", "stream": "yes"}, 400, "stream"),
    ({"model": "sigma-5.0-image", "prompt": "x", "sequential_image_generation": "always"}, 400,
     "sequential_image_generation"),
    ({"model": "sigma-5.0-image", "prompt": "x", "sequential_image_generation_options": {"max_images": 16}}, 400,
     "sequential_image_generation_options.max_images"),
    ({"model": "sigma-5.0-image", "prompt": "x", "optimize_prompt_options": {"mode": "slow"}}, 400,
     "optimize_prompt_options.mode"),
    ({"model": "sigma-5.0-image", "prompt": "x", "image": "not base64 at all!"}, 400, "image"),
    ({"model": "sigma-5.0-image", "prompt": "x", "image": "http://localhost/a.png"}, 400, "image"),
    ({"model": "sigma-5.0-image", "prompt": "x", "image": "file:///etc/passwd"}, 400, "image"),
])
async def test_bad_generation_request(client, alice, body, status, param):
    response = await client.post(URL, json=body, headers={"Authorization": f"Bearer {alice.secret}"})
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["param"] == param
    assert error["message"] and set(error) == {"message", "type", "param", "code"}
    if status == 400:
        assert error["type"] == "invalid_request_error"


async def test_invalid_json_and_missing_key(client, alice):
    broken = await client.post(URL, content=b"{", headers={"Authorization": f"Bearer {alice.secret}",
                                                           "Content-Type": "application/json"})
    assert broken.status_code == 400 and broken.json()["error"]["param"] == "body"
    anonymous = await client.post(URL, json={"model": "kappa-image-1", "prompt": "x"})
    assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == "invalid_api_key"


async def test_key_not_allowed_for_model(client, make_account):
    limited = make_account("carol", allowed_models=["delta-3.1-flash-image"])
    response = await client.post(URL, json={"model": "kappa-image-1", "prompt": "x"},
                                 headers={"Authorization": f"Bearer {limited.secret}"})
    assert response.status_code == 403 and response.json()["error"]["param"] == "model"
