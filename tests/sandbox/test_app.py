"""The sandbox app serves the modules the provider registry names (given at start-up)."""

from __future__ import annotations

from studio.providers.registry import sandbox_modules
from studio.sandbox.app import application


def test_the_app_is_given_every_registered_vendors_modules():
    assert application.modules == sandbox_modules()
    assert {"gemini", "gemini_embeddings", "openai_images", "openai_text", "openai_embeddings", "ark_images",
            "ark_tasks", "dashscope", "anthropic"} == set(application.modules)
