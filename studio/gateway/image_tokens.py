"""The tokens an image call will likely be billed: reserved before the call, settled with what the
vendor reports.

Image vendors bill a picture as output tokens, so an image counts against a tokens-per-minute
limit and, at a per-token price, against a budget, like a chat answer. These are upper estimates
from the vendors' published figures; the settlement corrects them with the reported usage.
"""

from __future__ import annotations

from studio.core.images import ImageJob, tier_size

# Gemini image models: output tokens of one image per size tier (the most any of them bills).
NATIVE_TIER_TOKENS = {"512": 1290, "1K": 1290, "2K": 1290, "4K": 2520}
NATIVE_DEFAULT_TIER = "1K"
# GPT-image: output tokens of one 1024x1024 image per quality; other sizes scale with their pixels.
GPT_IMAGE_TOKENS = {"low": 272, "medium": 1056, "high": 4160}
GPT_IMAGE_BASE_PIXELS = 1024 * 1024
GPT_IMAGE_LARGEST = 1536 * 1024  # what ``size: auto`` may pick
# Seedream: one output token per 256 pixels of each image; tiers are squares of these sides.
SEEDREAM_PIXELS_PER_TOKEN = 256
SEEDREAM_TIER_SIDES = {"1K": 1024, "2K": 2048, "4K": 4096}
SEEDREAM_DEFAULT_TIER = "2K"


def prompt_tokens(size: int) -> int:
    """Tokens of ``size`` bytes of prompt: about four bytes each."""
    return size // 4


def native_image(image_size: str | None) -> int:
    """Output tokens of one Gemini image of a size tier (``None``: the model's default)."""
    return NATIVE_TIER_TOKENS.get(image_size or NATIVE_DEFAULT_TIER, max(NATIVE_TIER_TOKENS.values()))


def _pixels(size: str) -> int | None:
    width, _, height = size.partition("x")
    return int(width) * int(height) if width.isdigit() and height.isdigit() else None


def _gpt_image(size: str, quality: str) -> int:
    per_base = GPT_IMAGE_TOKENS.get(quality, max(GPT_IMAGE_TOKENS.values()))  # auto: the highest
    pixels = _pixels(size) or GPT_IMAGE_LARGEST
    return -(-per_base * pixels // GPT_IMAGE_BASE_PIXELS)


def _seedream(size: str) -> int:
    pixels = _pixels(size)
    if pixels is None:
        side = SEEDREAM_TIER_SIDES.get(size, SEEDREAM_TIER_SIDES[SEEDREAM_DEFAULT_TIER])
        pixels = side * side
    return pixels // SEEDREAM_PIXELS_PER_TOKEN


def per_image(job: ImageJob) -> int:
    """Output tokens of one image of an images-API job, by its family's billing."""
    if job.family == "native":
        return native_image(tier_size(job.size, job.model).tier)
    if job.family == "layered":
        return _seedream(job.size)
    return _gpt_image(job.size, job.quality)
