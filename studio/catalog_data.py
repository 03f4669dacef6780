"""The demo catalog: every platform model id of the spec, its capabilities as data, and the
upstream model name the sandbox serves it under. ``seed_demo`` writes these rows.
"""

from __future__ import annotations

from typing import Any

RATIOS_10 = ["1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"]
RATIOS_14 = RATIOS_10 + ["1:4", "4:1", "1:8", "8:1"]
IMAGE_ROUTES = ["images.generations", "images.edits"]
VIDEO_A_ROUTES = ["video.alpha", "video.generic"]
VIDEO_B_ROUTES = ["video.beta", "video.generic"]
TEXT_ROUTES = ["chat", "messages", "responses"]


def native(model_id: str, name: str, upstream: str, sizes: list[str], ratios: list[str], refs: int) -> dict[str, Any]:
    return {
        "model_id": model_id, "kind": "native-image", "display_name": name, "default_protocol": "gemini",
        "routes": ["native", *IMAGE_ROUTES], "upstream_model": upstream, "owned_by": "delta",
        "capabilities": {
            "image_sizes": sizes, "aspect_ratios": ratios, "max_reference_images": refs,
            "modes": ["text-to-image", "edit", "compose", "multi-turn"], "max_n": 1,
        },
    }


def video(model_id: str, protocol: str, upstream: str, group: str, **caps: Any) -> dict[str, Any]:
    return {
        "model_id": model_id, "kind": "video", "display_name": model_id, "default_protocol": protocol,
        "routes": VIDEO_A_ROUTES if protocol == "ark" else VIDEO_B_ROUTES, "upstream_model": upstream,
        "owned_by": "alpha" if protocol == "ark" else model_id.split("-")[0].rstrip("0123456789."),
        "capabilities": {"group": group, **caps},
    }


DEMO_MODELS: list[dict[str, Any]] = [
    native("delta-3.1-flash-lite-image", "Delta 3.1 Flash Lite Image", "gemini-2.5-flash-image", ["1K"], RATIOS_10, 3),
    native("delta-3.1-flash-image", "Delta 3.1 Flash Image", "gemini-3.1-flash-image-preview",
           ["512", "1K", "2K", "4K"], RATIOS_14, 14),
    native("delta-3-pro-image", "Delta 3 Pro Image", "gemini-3-pro-image-preview", ["1K", "2K", "4K"], RATIOS_10, 14),
    {
        "model_id": "kappa-image-1", "kind": "image", "display_name": "Kappa Image 1", "default_protocol": "openai",
        "routes": IMAGE_ROUTES, "upstream_model": "gpt-image-1.5", "owned_by": "kappa",
        "capabilities": {
            "family": "standard", "sizes": ["1024x1024", "1536x1024", "1024x1536", "auto"],
            "qualities": ["low", "medium", "high", "auto"], "output_formats": ["png", "jpeg", "webp"],
            "backgrounds": ["transparent", "opaque", "auto"], "max_n": 10, "max_reference_images": 16,
            "max_partial_images": 3, "edits": True,
        },
    },
    {
        "model_id": "sigma-5.0-image", "kind": "image", "display_name": "Sigma 5.0 Image", "default_protocol": "ark",
        "routes": ["images.generations"], "upstream_model": "dola-seedream-5-0-pro-260628", "owned_by": "sigma",
        "capabilities": {
            "family": "layered", "sizes": ["1K", "2K", "4K"], "output_formats": ["png", "jpeg", "webp"],
            "max_images": 15, "max_reference_images": 14, "layer_decomposition": True, "sequential": True,
            "watermark": True, "optimize_prompt_modes": ["standard", "fast"], "max_n": 1,
        },
    },
    {
        "model_id": "omicron-4-mini", "kind": "text", "display_name": "Omicron 4 Mini", "default_protocol": "openai",
        "routes": TEXT_ROUTES, "upstream_model": "gpt-4o-mini", "owned_by": "omicron",
        "capabilities": {"context_window": 128000, "max_output_tokens": 16384, "tools": True, "vision": True},
    },
    {
        "model_id": "epsilon-4.5", "kind": "text", "display_name": "Epsilon 4.5", "default_protocol": "anthropic",
        "routes": TEXT_ROUTES, "upstream_model": "claude-sonnet-4-5", "owned_by": "epsilon",
        "capabilities": {"context_window": 200000, "max_output_tokens": 64000, "tools": True, "vision": True,
                         "thinking": True},
    },
    video("alpha-2.5", "ark", "dreamina-seedance-2-5-260628", "alpha-2.5"),
    video("alpha-2.0", "ark", "dreamina-seedance-2-0-260128", "alpha-2.0"),
    video("alpha-2.0-mini", "ark", "dreamina-seedance-2-0-mini-260128", "alpha-2.0"),
    video("alpha-2.0-fast", "ark", "dreamina-seedance-2-0-fast-260128", "alpha-2.0"),
    video("beta2.7-t2v", "dashscope", "wan2.7-t2v", "beta2.7", mode="t2v"),
    video("beta2.7-i2v", "dashscope", "wan2.7-i2v", "beta2.7", mode="i2v"),
    video("beta2.7-r2v", "dashscope", "wan2.7-r2v", "beta2.7", mode="r2v"),
    video("beta2.7-videoedit", "dashscope", "wan2.7-videoedit", "beta2.7", mode="videoedit"),
    video("gamma-1.1-t2v", "dashscope", "gamma-1.1-t2v", "gamma", mode="t2v"),
    video("gamma-1.1-i2v", "dashscope", "gamma-1.1-i2v", "gamma", mode="i2v"),
    video("gamma-1.1-r2v", "dashscope", "gamma-1.1-r2v", "gamma", mode="r2v"),
    video("gamma-1.0-video-edit", "dashscope", "gamma-1.0-video-edit", "gamma", mode="videoedit"),
    video("beta3.0-video", "dashscope", "beta3.0-video", "beta3.0"),
    video("beta3.0-video-prime", "dashscope", "beta3.0-video-prime", "beta3.0"),
]

SANDBOX_UPSTREAM = {"name": "Sandbox", "protocol": "sandbox", "credential": "sandbox-local-key"}
