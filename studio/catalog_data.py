"""The demo catalog: every platform model id of the spec, its capabilities as data, and the
upstream model name the sandbox serves it under. ``seed_demo`` writes these rows.
"""

from __future__ import annotations

from typing import Any

RATIOS_10 = ["1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"]
RATIOS_14 = RATIOS_10 + ["1:4", "4:1", "1:8", "8:1"]
IMAGE_ROUTES = ["images.generations", "images.edits"]
VIDEO_ARK_ROUTES = ["video.ark", "video.generic"]
VIDEO_DASHSCOPE_ROUTES = ["video.dashscope", "video.generic"]
TEXT_ROUTES = ["chat", "messages", "responses"]
EMBEDDING_ROUTES = ["embeddings", "native.embed"]  # /v1/embeddings and the native :embedContent


# --- video capabilities (spec/video.md field tables); the rules in studio/gateway/video_rules.py read these.
ALPHA_RATIOS = ["16:9", "4:3", "1:1", "3:4", "9:16", "21:9", "adaptive"]
ALPHA_20: dict[str, Any] = {
    "ratios": ALPHA_RATIOS, "resolutions": ["480p", "720p", "1080p", "4k"], "default_resolution": "720p",
    "duration": {"min": 4, "max": 15, "auto": True}, "frames": False, "seed": False, "priority": True,
    "flex": False, "draft": False, "camera_fixed": False, "generate_audio": True,
    "max_reference_images": 9, "max_reference_videos": 3, "max_reference_audios": 3,
    "video_roles": ["reference_video"],
}
ALPHA_20_LITE = {**ALPHA_20, "resolutions": ["480p", "720p"]}
ALPHA_25 = {**ALPHA_20, "resolutions": ["480p", "720p", "1080p"],
            "video_roles": ["reference_video", "edit_video", "extend_forward", "extend_backward"]}
ALPHA_15_PRO: dict[str, Any] = {
    "ratios": ALPHA_RATIOS, "resolutions": ["480p", "720p", "1080p"], "default_resolution": "720p",
    "duration": {"min": 4, "max": 12, "auto": True}, "frames": False, "seed": True, "priority": False,
    "flex": True, "draft": True, "camera_fixed": True, "generate_audio": True,
    "max_reference_images": 0, "max_reference_videos": 0, "max_reference_audios": 0, "video_roles": [],
}
ALPHA_10_PRO = {**ALPHA_15_PRO, "default_resolution": "1080p", "duration": {"min": 2, "max": 12, "auto": False},
                "frames": True, "draft": False, "generate_audio": False}
DASHSCOPE_RESOLUTIONS = ["480P", "720P", "1080P"]
BETA27: dict[str, Any] = {
    "variant": "beta2.7", "resolutions": DASHSCOPE_RESOLUTIONS, "default_resolution": "1080P",
    "ratios": ["16:9", "9:16", "1:1", "4:3", "3:4"], "duration": {"min": 2, "max": 15, "auto": False},
    "max_prompt": 5000,
}
GAMMA: dict[str, Any] = {
    "variant": "gamma", "resolutions": DASHSCOPE_RESOLUTIONS, "default_resolution": "1080P",
    "ratios": ["16:9", "9:16", "1:1", "4:3", "3:4", "5:4", "4:5", "9:21", "21:9"],
    "duration": {"min": 2, "max": 15, "auto": False}, "max_prompt": 5000,
}
BETA30: dict[str, Any] = {
    "variant": "beta3.0", "resolutions": DASHSCOPE_RESOLUTIONS, "default_resolution": "1080P",
    "ratios": ["16:9", "4:3", "1:1", "3:4", "9:16", "adaptive"], "duration": {"min": 2, "max": 30, "auto": True},
    "max_total_seconds": 30, "max_prompt": 20000,
    "media": {"first_frame": 1, "last_frame": 1, "reference_image": 10, "reference_video": 5,
              "reference_audio": 5, "file": 1, "link": 1},
    "reference_seconds": {"reference_video": 15, "reference_audio": 15},
    "media_bytes": {"reference_image": 20 * 1024 * 1024, "reference_video": 100 * 1024 * 1024,
                    "reference_audio": 15 * 1024 * 1024},
    "file_types": ["docx", "doc", "xlsx", "xls", "pptx", "ppt", "pdf", "txt", "md"],
}


def native(model_id: str, name: str, upstream: str, sizes: list[str], ratios: list[str], refs: int) -> dict[str, Any]:
    return {
        "model_id": model_id, "kind": "native-image", "display_name": name, "default_protocol": "gemini",
        "routes": ["native", *IMAGE_ROUTES], "upstream_model": upstream, "owned_by": "delta",
        "capabilities": {
            "image_sizes": sizes, "aspect_ratios": ratios, "max_reference_images": refs,
            "modes": ["text-to-image", "edit", "compose", "multi-turn"], "max_n": 1,
            "seed": True,  # generationConfig.seed: the same seed and prompt give the same image
            # The standard images routes, served by translation onto the Gemini protocol.
            "output_formats": ["png"], "backgrounds": ["auto", "opaque"], "qualities": ["auto"],
            "default_output_format": "png", "max_partial_images": 2, "mask": False,
        },
    }


def video(model_id: str, protocol: str, upstream: str, group: str, **caps: Any) -> dict[str, Any]:
    return {
        "model_id": model_id, "kind": "video", "display_name": model_id, "default_protocol": protocol,
        "routes": VIDEO_ARK_ROUTES if protocol == "ark" else VIDEO_DASHSCOPE_ROUTES, "upstream_model": upstream,
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
            "max_partial_images": 3, "edits": True, "mask": True, "outpaint": True,
            "moderations": ["low", "auto"], "styles": ["vivid", "natural"], "input_fidelities": ["high", "low"],
            "default_output_format": "png",
        },
    },
    {
        "model_id": "sigma-5.0-image", "kind": "image", "display_name": "Sigma 5.0 Image", "default_protocol": "ark",
        "routes": ["images.generations"], "upstream_model": "dola-seedream-5-0-pro-260628", "owned_by": "sigma",
        "capabilities": {
            "family": "layered", "sizes": ["1K", "2K", "4K"], "output_formats": ["png", "jpeg", "webp"],
            "max_images": 15, "max_reference_images": 14, "layer_decomposition": True, "sequential": True,
            "watermark": True, "optimize_prompt_modes": ["standard", "fast"], "max_n": 1,
            "image_to_image": True, "backgrounds": ["transparent", "opaque", "auto"],
            "sequential_modes": ["auto", "disabled"], "pixel_range": [921600, 16777216],
            "default_output_format": "jpeg",
        },
    },
    {
        "model_id": "omicron-4-mini", "kind": "text", "display_name": "Omicron 4 Mini", "default_protocol": "openai",
        "routes": TEXT_ROUTES, "upstream_model": "gpt-4o-mini", "owned_by": "omicron",
        "capabilities": {"context_window": 128000, "max_output_tokens": 16384, "tools": True, "vision": True,
                         "thinking": False},
    },
    {
        "model_id": "epsilon-4.5", "kind": "text", "display_name": "Epsilon 4.5", "default_protocol": "anthropic",
        "routes": TEXT_ROUTES, "upstream_model": "claude-sonnet-4-5", "owned_by": "epsilon",
        "capabilities": {"context_window": 200000, "max_output_tokens": 64000, "tools": True, "vision": True,
                         "thinking": True},
    },
    {
        "model_id": "omicron-embed-3-small", "kind": "embedding", "display_name": "Omicron Embed 3 Small",
        "default_protocol": "openai", "routes": EMBEDDING_ROUTES, "upstream_model": "text-embedding-3-small",
        "owned_by": "omicron",
        "capabilities": {"dimensions": 1536, "min_dimensions": 1, "flexible_dimensions": True, "max_inputs": 2048,
                         "input_token_limit": 8191, "output_token_limit": 1},
    },
    {
        "model_id": "delta-embedding-1", "kind": "embedding", "display_name": "Delta Embedding 1",
        "default_protocol": "gemini", "routes": EMBEDDING_ROUTES, "upstream_model": "gemini-embedding-001",
        "owned_by": "delta",
        "capabilities": {"dimensions": 3072, "min_dimensions": 128, "flexible_dimensions": True, "max_inputs": 100,
                         "input_token_limit": 2048, "output_token_limit": 1},
    },
    video("alpha-2.5", "ark", "dreamina-seedance-2-5-260628", "alpha-2.5", **ALPHA_25),
    video("alpha-2.0", "ark", "dreamina-seedance-2-0-260128", "alpha-2.0", **ALPHA_20),
    video("alpha-2.0-mini", "ark", "dreamina-seedance-2-0-mini-260128", "alpha-2.0", **ALPHA_20_LITE),
    video("alpha-2.0-fast", "ark", "dreamina-seedance-2-0-fast-260128", "alpha-2.0", **ALPHA_20_LITE),
    video("alpha-1.5-pro", "ark", "seedance-1-5-pro-251215", "alpha-1.5", **ALPHA_15_PRO),
    video("alpha-1.0-pro", "ark", "seedance-1-0-pro-250528", "alpha-1.0", **ALPHA_10_PRO),
    video("alpha-1.0-pro-fast", "ark", "seedance-1-0-pro-fast-251015", "alpha-1.0", **ALPHA_10_PRO),
    video("beta2.7-t2v", "dashscope", "wan2.7-t2v", "beta2.7", mode="t2v", **BETA27, media={}),
    video("beta2.7-i2v", "dashscope", "wan2.7-i2v", "beta2.7", mode="i2v", **BETA27,
          media={"first_frame": 1, "last_frame": 1, "driving_audio": 1}),
    video("beta2.7-r2v", "dashscope", "wan2.7-r2v", "beta2.7", mode="r2v", **BETA27,
          media={"reference_image": 5, "reference_video": 3, "reference_voice": 1}),
    video("beta2.7-videoedit", "dashscope", "wan2.7-videoedit", "beta2.7", mode="videoedit", **BETA27,
          media={"video": 1, "reference_image": 3}, audio_setting=True),
    video("gamma-1.1-t2v", "dashscope", "gamma-1.1-t2v", "gamma", mode="t2v", **GAMMA, media={}),
    video("gamma-1.1-i2v", "dashscope", "gamma-1.1-i2v", "gamma", mode="i2v", **GAMMA, media={"first_frame": 1}),
    video("gamma-1.1-r2v", "dashscope", "gamma-1.1-r2v", "gamma", mode="r2v", **GAMMA, media={"reference_image": 4}),
    video("gamma-1.0-video-edit", "dashscope", "gamma-1.0-video-edit", "gamma", mode="videoedit", **GAMMA,
          media={"video": 1, "reference_image": 3}),
    video("beta3.0-video", "dashscope", "beta3.0-video", "beta3.0", **BETA30),
    video("beta3.0-video-prime", "dashscope", "beta3.0-video-prime", "beta3.0", **BETA30),
]

SANDBOX_UPSTREAM = {"name": "Sandbox", "protocol": "sandbox", "credential": "sandbox-local-key"}
