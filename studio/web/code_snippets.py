""""Get code": the request behind a result as curl, Python and JavaScript, ready to paste.

The key is never written out: snippets read it from an environment variable, and a comment names
which of the user's keys to put there (by its name and prefix). Python uses the official clients:
``google-genai`` for the native family, ``openai`` for the images families.
"""

from __future__ import annotations

import json
from typing import Any

from studio.web.result_actions import Recipe

ENV = "STUDIO_API_KEY"
NATIVE_FIELDS = {"aspect_ratio": "aspectRatio", "image_size": "imageSize"}
IMAGES_FIELDS = ("size", "quality", "output_format", "background")


def _native_body(recipe: Recipe) -> dict[str, Any]:
    image_config = {NATIVE_FIELDS[k]: v for k, v in recipe.options.items() if k in NATIVE_FIELDS}
    config: dict[str, Any] = {"responseModalities": ["TEXT", "IMAGE"]}
    if image_config:
        config["imageConfig"] = image_config
    if recipe.seed is not None:
        config["seed"] = recipe.seed
    return {"contents": [{"role": "user", "parts": [{"text": recipe.prompt}]}], "generationConfig": config}


def _images_body(recipe: Recipe) -> dict[str, Any]:
    body: dict[str, Any] = {"model": recipe.model, "prompt": recipe.prompt}
    body.update({k: recipe.options[k] for k in IMAGES_FIELDS if k in recipe.options})
    return body


def _key_comment(key_label: str, mark: str) -> str:
    return f"{mark} Put your key {key_label} in {ENV}." if key_label else f"{mark} Make a key on the Keys page and put it in {ENV}."


def snippets(recipe: Recipe, family: str, base_url: str, key_label: str) -> dict[str, str]:
    """``{"curl": ..., "python": ..., "javascript": ...}`` for this recipe on this gateway."""
    base = base_url.rstrip("/")
    if family == "native":
        body = _native_body(recipe)
        url = f"{base}/v1/models/{recipe.model}:generateContent"
        pretty = json.dumps(body, indent=2, ensure_ascii=False)
        config_args = []
        image_config = body["generationConfig"].get("imageConfig") or {}
        if image_config:
            args = ", ".join(f"{'aspect_ratio' if k == 'aspectRatio' else 'image_size'}={v!r}"
                             for k, v in image_config.items())
            config_args.append(f"image_config=types.ImageConfig({args})")
        if recipe.seed is not None:
            config_args.append(f"seed={recipe.seed}")
        config_args.append('response_modalities=["TEXT", "IMAGE"]')
        python = "\n".join([
            _key_comment(key_label, "#"),
            "import os", "", "from google import genai", "from google.genai import types", "",
            f'client = genai.Client(api_key=os.environ["{ENV}"],',
            f'                      http_options=types.HttpOptions(base_url="{base}", api_version="v1"))',
            "response = client.models.generate_content(",
            f"    model={recipe.model!r},",
            f"    contents={recipe.prompt!r},",
            "    config=types.GenerateContentConfig(" + ", ".join(config_args) + "),",
            ")",
            "for part in response.candidates[0].content.parts:",
            "    if part.inline_data:",
            '        open("image.png", "wb").write(part.inline_data.data)',
        ])
        headers = {"x-delta-api-key": f"${ENV}"}
        save_js = ('const part = data.candidates[0].content.parts.find((p) => p.inlineData);\n'
                   'console.log(part.inlineData.mimeType, part.inlineData.data.length);')
    else:
        body = _images_body(recipe)
        url = f"{base}/v1/images/generations"
        pretty = json.dumps(body, indent=2, ensure_ascii=False)
        args = "".join(f"\n    {k}={v!r}," for k, v in body.items())
        python = "\n".join([
            _key_comment(key_label, "#"),
            "import base64", "import os", "", "from openai import OpenAI", "",
            f'client = OpenAI(base_url="{base}/v1", api_key=os.environ["{ENV}"])',
            f"result = client.images.generate({args}\n)",
            'open("image.png", "wb").write(base64.b64decode(result.data[0].b64_json))',
        ])
        headers = {"Authorization": f"Bearer ${ENV}"}
        save_js = "console.log(data.data[0].b64_json.length, data.usage);"
    header_args = " \\\n  ".join(f'-H "{k}: {v}"' for k, v in headers.items())
    curl = "\n".join([
        _key_comment(key_label, "#"),
        f"curl -s {url} \\",
        f"  {header_args} \\",
        '  -H "Content-Type: application/json" \\',
        "  -d '" + pretty.replace("'", "'\\''") + "'",
    ])
    js_headers = ", ".join(f'"{k}": ' + (f"`Bearer ${{process.env.{ENV}}}`" if k == "Authorization"
                                         else f"process.env.{ENV}") for k in headers)
    javascript = "\n".join([
        _key_comment(key_label, "//"),
        f'const response = await fetch("{url}", {{',
        '  method: "POST",',
        f'  headers: {{ {js_headers}, "Content-Type": "application/json" }},',
        f"  body: JSON.stringify({pretty.replace(chr(10), chr(10) + '  ')}),",
        "});",
        "const data = await response.json();",
        save_js,
    ])
    return {"curl": curl, "python": python, "javascript": javascript}
