"""Seed prices of the demo catalog (US dollars), in the shape ``manage.py prices import`` reads.

Token prices are per million tokens; native image models are billed as tokens (an image is
about 1,290 output tokens at 1K), the standard images model per image by size and quality,
the layered one per image by size, video per second by resolution (``+audio`` when the track is
made).
"""

from __future__ import annotations

from typing import Any

ALPHA = {"480p": "0.05", "720p": "0.10", "1080p": "0.20", "4k": "0.40",
         "480p+audio": "0.07", "720p+audio": "0.14", "1080p+audio": "0.28", "4k+audio": "0.56"}
ALPHA_FAST = {k: str(round(float(v) * 0.6, 3)) for k, v in ALPHA.items()}
DASHSCOPE = {"480p": "0.06", "720p": "0.10", "1080p": "0.15"}

DEMO_PRICES: list[dict[str, Any]] = [
    {"model_id": "delta-3.1-flash-lite-image", "input_per_million": "0.30", "output_per_million": "30.00"},
    {"model_id": "delta-3.1-flash-image", "input_per_million": "0.50", "output_per_million": "60.00"},
    {"model_id": "delta-3-pro-image", "input_per_million": "2.00", "output_per_million": "120.00"},
    {"model_id": "kappa-image-1", "per_image": {
        "1024x1024/low": "0.011", "1024x1024/medium": "0.042", "1024x1024/high": "0.167",
        "1536x1024/low": "0.016", "1536x1024/medium": "0.063", "1536x1024/high": "0.25",
        "1024x1536/low": "0.016", "1024x1536/medium": "0.063", "1024x1536/high": "0.25", "*": "0.042"}},
    {"model_id": "sigma-5.0-image", "per_image": {"1K": "0.03", "2K": "0.035", "4K": "0.05", "*": "0.035"}},
    {"model_id": "omicron-4-mini", "input_per_million": "0.15", "output_per_million": "0.60",
     "cached_per_million": "0.075"},
    {"model_id": "omicron-embed-3-small", "input_per_million": "0.02"},
    {"model_id": "delta-embedding-1", "input_per_million": "0.15"},
    {"model_id": "epsilon-4.5", "input_per_million": "3.00", "output_per_million": "15.00",
     "cached_per_million": "0.30"},
    *({"model_id": m, "per_video_second": ALPHA} for m in ("alpha-2.5", "alpha-2.0", "alpha-1.5-pro", "alpha-1.0-pro")),
    *({"model_id": m, "per_video_second": ALPHA_FAST}
      for m in ("alpha-2.0-mini", "alpha-2.0-fast", "alpha-1.0-pro-fast")),
    *({"model_id": m, "per_video_second": DASHSCOPE} for m in (
        "beta2.7-t2v", "beta2.7-i2v", "beta2.7-r2v", "beta2.7-videoedit", "gamma-1.1-t2v", "gamma-1.1-i2v",
        "gamma-1.1-r2v", "gamma-1.0-video-edit", "beta3.0-video", "beta3.0-video-prime")),
]
