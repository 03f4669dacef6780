"""A result's next steps: its recipe (reuse prompt and seed), the upscale plan and its request
as code with the user's key named, never written out."""

from __future__ import annotations

import pytest

from studio.gateway.media.storage import store_bytes
from studio.models import Generation, GenerationStatus
from tests.web.library_factories import png

pytestmark = pytest.mark.django_db


def generated(owner, model: str, parameters: dict, size=(1024, 1024), prompt="a red fox"):
    generation = Generation.objects.create(user=owner, model_id=model, route="studio", prompt=prompt,
                                           status=GenerationStatus.SUCCEEDED, parameters=parameters)
    return store_bytes(png("red", size), "image/png", owner_id=owner.id, generation_id=generation.id)


def test_native_result_recipe_upscale_and_code(web, alice):
    asset = generated(alice.user, "delta-3.1-flash-image", {
        "generationConfig": {"imageConfig": {"aspectRatio": "16:9", "imageSize": "1K"}, "seed": 4242}})
    web.force_login(alice.user)
    data = web.get(f"/assets/{asset.id}/actions").json()
    assert data["recipe"] == {"model": "delta-3.1-flash-image", "prompt": "a red fox",
                              "options": {"aspect_ratio": "16:9", "image_size": "1K"}, "seed": 4242}
    assert data["upscale"]["model"] == "delta-3.1-flash-image" and data["upscale"]["tier"] == "2K"
    assert data["starred"] is False
    web.post(f"/assets/{asset.id}/star", {"starred": "1"})
    assert web.get(f"/assets/{asset.id}/actions").json()["starred"] is True
    code = data["code"]
    assert '"alice key"' in code["python"] and alice.secret not in str(code)
    assert "genai.Client" in code["python"] and "seed=4242" in code["python"]
    assert ":generateContent" in code["curl"] and '"aspectRatio": "16:9"' in code["curl"]
    assert "process.env.STUDIO_API_KEY" in code["javascript"]
    compile(code["python"], "snippet.py", "exec")  # the Python runs as written


def test_images_result_code_uses_the_openai_client(web, alice):
    asset = generated(alice.user, "kappa-image-1", {"size": "1536x1024", "quality": "high"})
    web.force_login(alice.user)
    code = web.get(f"/assets/{asset.id}/actions").json()["code"]
    assert "from openai import OpenAI" in code["python"] and "quality='high'" in code["python"]
    assert "Authorization: Bearer $STUDIO_API_KEY" in code["curl"]
    compile(code["python"], "snippet.py", "exec")


def test_a_4k_image_cannot_be_upscaled_and_says_why(web, alice):
    asset = generated(alice.user, "delta-3-pro-image", {}, size=(4096, 4096))
    web.force_login(alice.user)
    plan = web.get(f"/assets/{asset.id}/actions").json()["upscale"]
    assert plan["model"] == "" and "largest size" in plan["message"]


def test_actions_are_private(web, alice, make_account):
    asset = generated(alice.user, "kappa-image-1", {})
    web.force_login(make_account("bob").user)
    assert web.get(f"/assets/{asset.id}/actions").status_code == 404


def test_generate_page_starts_from_a_result(web, alice):
    asset = generated(alice.user, "delta-3.1-flash-image", {"generationConfig": {"seed": 7}})
    web.force_login(alice.user)
    page = web.get(f"/generate/?recipe={asset.id}&variations={asset.id}").context
    state = page["page_state"]
    assert state["recipe"]["seed"] == 7 and state["variations"] == str(asset.id)
    models = {m["id"]: m for m in page["models"]}
    assert models["kappa-image-1"]["price"]["lines"]  # the price sheet the catalog lists
    assert "layers" in models["sigma-5.0-image"]["abilities"]
