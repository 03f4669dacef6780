"""Gemini ``generateContent`` / ``streamGenerateContent?alt=sse`` for image models, offline.

Faithful to the vendor where clients can tell: camelCase parts, thought parts before the final
image, ``thoughtSignature`` on the first text part after the thoughts and on every non-thought
image, strict replay of signatures in multi-turn edits (HTTP 400 ``INVALID_ARGUMENT`` when one
is lost), cumulative ``usageMetadata``, no ``[DONE]``. Images come from ``imaging``: edits and
compositions are derived from the input pixels.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import io
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import orjson
from django.conf import settings
from PIL import Image

from studio.sandbox import imaging
from studio.sandbox.app import Request, Response, json_response, route, sse_response

_SIGNING_KEY = hashlib.sha256(b"sandbox-thought-signatures").digest()
RATIOS_10 = ["1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"]
RATIOS_14 = RATIOS_10 + ["1:4", "4:1", "1:8", "8:1"]
IMAGE_TOKENS = {"512": 747, "1K": 1120, "2K": 1680, "4K": 2520}  # 3.1 Flash Image (reference §1.3)
PRO_IMAGE_TOKENS = {"1K": 1120, "2K": 1120, "4K": 2000}  # the vendor's published Pro pricing
FLASH_25_IMAGE_TOKENS = {"1K": 1290}


@dataclass(frozen=True)
class SandboxModel:
    tiers: tuple[str, ...]
    ratios: tuple[str, ...]
    image_tokens: dict[str, int]
    always_thinks: bool = False


MODELS: dict[str, SandboxModel] = {
    "gemini-3.1-flash-image-preview": SandboxModel(("512", "1K", "2K", "4K"), tuple(RATIOS_14), IMAGE_TOKENS),
    "gemini-3.1-flash-image": SandboxModel(("512", "1K", "2K", "4K"), tuple(RATIOS_14), IMAGE_TOKENS),
    "gemini-3-pro-image-preview": SandboxModel(("1K", "2K", "4K"), tuple(RATIOS_10), PRO_IMAGE_TOKENS, always_thinks=True),
    "gemini-3-pro-image": SandboxModel(("1K", "2K", "4K"), tuple(RATIOS_10), PRO_IMAGE_TOKENS, always_thinks=True),
    "gemini-2.5-flash-image": SandboxModel(("1K",), tuple(RATIOS_10), FLASH_25_IMAGE_TOKENS),
}


def chunk_delay() -> float:
    """Pause between streamed chunks so the studio shows frames arriving (0 in tests)."""
    return settings.STUDIO_SANDBOX_DELAY


class GeminiError(Exception):
    def __init__(self, code: int, status: str, message: str) -> None:
        super().__init__(message)
        self.code, self.status, self.message = code, status, message

    def response(self) -> Response:
        return json_response({"error": {"code": self.code, "message": self.message, "status": self.status}}, self.code)


def _mac(data: bytes) -> bytes:
    return hmac.new(_SIGNING_KEY, data, hashlib.sha256).digest()


def sign(data: bytes) -> str:
    return base64.b64encode(_mac(data)).decode()


def _part_field(part: dict[str, Any], camel: str, snake: str) -> Any:
    return part.get(camel, part.get(snake))


def _inline(part: dict[str, Any]) -> dict[str, Any] | None:
    inline = _part_field(part, "inlineData", "inline_data")
    return inline if isinstance(inline, dict) else None


def _signature(part: dict[str, Any]) -> str | None:
    return _part_field(part, "thoughtSignature", "thought_signature")


def _b64_bytes(signature: str) -> bytes | None:
    """Proto ``bytes`` fields: clients may send them standard or URL-safe, padded or not."""
    text = signature.strip().replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (ValueError, binascii.Error):
        return None


def check_replayed_signatures(contents: list[dict[str, Any]]) -> None:
    """Strict validation of earlier model turns, as the vendor does for image models.

    The first part after the thoughts and every non-thought image must come back with the
    signature they were sent with; an image's signature must still match its pixels.
    """
    for ci, content in enumerate(contents):
        if content.get("role") != "model":
            continue
        first_after_thoughts = True
        for pi, part in enumerate(content.get("parts") or []):
            if not isinstance(part, dict) or part.get("thought"):
                continue
            inline = _inline(part)
            required = inline is not None or first_after_thoughts
            first_after_thoughts = False
            signature = _signature(part)
            if not signature:
                if required:
                    raise GeminiError(
                        400, "INVALID_ARGUMENT",
                        f"{'Image' if inline is not None else 'Text'} part is missing a thought_signature in "
                        f"content position {ci + 1}, part position {pi + 1}.",
                    )
                continue
            raw = _b64_bytes(str(signature))
            # An image's signature is bound to its bytes (not to how a client re-encoded them).
            if raw is None or (inline is not None and not hmac.compare_digest(
                    raw, _mac(_b64_bytes(str(inline.get("data", ""))) or b""))):
                raise GeminiError(400, "INVALID_ARGUMENT", "Corrupted thought signature.")


def _decode_image(inline: dict[str, Any]) -> Image.Image:
    try:
        image = Image.open(io.BytesIO(_b64_bytes(str(inline.get("data", ""))) or b""))
        image.load()
    except Exception as exc:
        raise GeminiError(400, "INVALID_ARGUMENT", "Unable to process input image.") from exc
    return image.convert("RGB")


@dataclass
class Plan:
    """What to draw: derived from the parts, as the real model would read them."""

    prompt: str
    inputs: list[Image.Image]
    ratio: str
    tier: str
    thinks: bool
    with_text: bool
    seed: int


def _plan(model: SandboxModel, body: dict[str, Any]) -> Plan:
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise GeminiError(400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified")
    _check_shape(contents)
    check_replayed_signatures(contents)
    config = _object(body.get("generationConfig") or body.get("generation_config"), "generation_config",
                     "GenerationConfig")
    image_config = _object(config.get("imageConfig") or config.get("image_config"), "generation_config.image_config",
                           "ImageConfig")
    tier = str(image_config.get("imageSize") or image_config.get("image_size") or "1K")
    if tier not in model.tiers:
        raise GeminiError(400, "INVALID_ARGUMENT", f"Unsupported image size: {tier}. Supported: {', '.join(model.tiers)}")
    ratio = image_config.get("aspectRatio") or image_config.get("aspect_ratio")
    if ratio is not None and ratio not in model.ratios:
        raise GeminiError(400, "INVALID_ARGUMENT", f"Unsupported aspect ratio: {ratio}")
    listed = config.get("responseModalities") or config.get("response_modalities") or []
    if not isinstance(listed, list):
        raise _invalid_value("generation_config.response_modalities", "GenerationConfig.Modality", listed)
    modalities = [str(m).upper() for m in listed]
    thinking = _object(config.get("thinkingConfig") or config.get("thinking_config"),
                       "generation_config.thinking_config", "ThinkingConfig")
    include_thoughts = bool(thinking.get("includeThoughts") or thinking.get("include_thoughts"))

    last_user = next((c for c in reversed(contents) if c.get("role", "user") == "user"), contents[-1])
    texts = [str(p["text"]) for p in last_user.get("parts") or [] if isinstance(p, dict) and p.get("text")]
    inputs = [_decode_image(i) for p in last_user.get("parts") or [] if (i := _inline(p))]
    if not inputs:
        # Multi-turn edit: the image to change is the last final image of the previous model turn.
        for content in reversed(contents):
            if content.get("role") == "model":
                finals = [i for p in content.get("parts") or [] if (i := _inline(p)) and not p.get("thought")]
                if finals:
                    inputs = [_decode_image(finals[-1])]
                break
    prompt = " ".join(texts).strip()
    if ratio is None:
        ratio = _closest_ratio(inputs[0], model.ratios) if inputs else "1:1"
    seed = imaging.seed_from(prompt, ratio, tier, str(config.get("seed", "")), *(im.tobytes()[:4096] for im in inputs))
    return Plan(
        prompt=prompt, inputs=inputs, ratio=ratio, tier=tier,
        thinks=model.always_thinks or include_thoughts, with_text=modalities != ["IMAGE"], seed=seed,
    )


def _closest_ratio(image: Image.Image, ratios: tuple[str, ...]) -> str:
    target = image.width / image.height

    def distance(ratio: str) -> float:
        w, h = ratio.split(":")
        return abs(int(w) / int(h) - target)

    return min(ratios, key=distance)


def _render(plan: Plan) -> Image.Image:
    width, height = imaging.tier_size(plan.ratio, plan.tier)
    if len(plan.inputs) > 1:
        return imaging.render_composition(plan.inputs, plan.prompt, width, height, seed=plan.seed)
    if plan.inputs:
        return imaging.render_edit(plan.inputs[0], plan.prompt, seed=plan.seed, size=(width, height))
    return imaging.render_prompt_image(plan.prompt, width, height, seed=plan.seed)


def _b64_png(image: Image.Image) -> str:
    return base64.b64encode(imaging.encode_image(image, "png")).decode()


def _tokens(text: str) -> int:
    return max(1, len(text.split()) * 4 // 3)


def _invalid_value(where: str, message_type: str, value: Any) -> GeminiError:
    """The vendor's answer to a field of the wrong shape (its JSON-to-proto mapping refuses it)."""
    return GeminiError(400, "INVALID_ARGUMENT", f"Invalid value at '{where}' "
                       f"(type.googleapis.com/google.ai.generativelanguage.v1beta.{message_type}), {json.dumps(value)}")


def _object(value: Any, where: str, message_type: str) -> dict[str, Any]:
    """An optional message field: ``{}`` when absent, the vendor's 400 when it is not an object."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _invalid_value(where, message_type, value)
    return value


def _check_shape(contents: Any) -> None:
    """Contents, each an object whose parts are a list of objects (the vendor's 400 otherwise)."""
    if not isinstance(contents, list):
        raise _invalid_value("contents", "Content", contents)
    for i, content in enumerate(contents):
        if not isinstance(content, dict):
            raise _invalid_value(f"contents[{i}]", "Content", content)
        parts = content.get("parts") or []
        if not isinstance(parts, list):
            raise _invalid_value(f"contents[{i}].parts", "Part", parts)
        for j, part in enumerate(parts):
            if not isinstance(part, dict):
                raise _invalid_value(f"contents[{i}].parts[{j}]", "Part", part)


def _prompt_tokens(body: dict[str, Any]) -> int:
    """The prompt's tokens, of contents whose shape was checked (``_check_shape``)."""
    total = 0
    for content in body.get("contents") or []:
        for part in content.get("parts") or []:
            total += _tokens(str(part["text"])) if part.get("text") else 0
            total += 258 if _inline(part) else 0
    return total


def _markers(prompt: str) -> str | None:
    """Prompts can ask the sandbox for the vendor's refusals, so clients can test them."""
    for marker in ("[block]", "[image_safety]", "[no_image]"):
        if marker in prompt.lower():
            return marker
    return None


async def _frames(
    model_name: str, model: SandboxModel, body: dict[str, Any], plan: Plan | None = None
) -> AsyncIterator[dict[str, Any]]:
    """The answer chunk by chunk, produced as it is drawn; the buffered route merges them."""
    plan = plan or _plan(model, body)
    response_id = uuid.uuid4().hex[:22]
    base = {"modelVersion": model_name, "responseId": response_id}
    prompt_tokens = _prompt_tokens(body)
    marker = _markers(plan.prompt)
    if marker == "[block]":
        yield {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
               "usageMetadata": {"promptTokenCount": prompt_tokens, "totalTokenCount": prompt_tokens}, **base}
        return
    if marker == "[image_safety]":
        yield {"candidates": [{"finishReason": "IMAGE_SAFETY", "index": 0}],
               "usageMetadata": {"promptTokenCount": prompt_tokens, "totalTokenCount": prompt_tokens}, **base}
        return

    thought_tokens = 0

    def candidate(parts: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        return {"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0, **extra}], **base}

    subject = plan.prompt or "the image"
    if plan.thinks:
        thought_a = f"Considering the request: {subject[:120]}."
        thought_b = f" Planning a {plan.ratio} composition at {plan.tier}."
        thought_tokens = _tokens(thought_a + thought_b)
        yield candidate([{"text": thought_a, "thought": True}])
        yield candidate([{"text": thought_b, "thought": True}])
        if model.always_thinks:
            w, h = imaging.tier_size(plan.ratio, "1K" if "1K" in model.tiers else plan.tier)
            draft = await asyncio.to_thread(imaging.render_thought_draft, plan.prompt, w // 4, h // 4, plan.seed)
            yield candidate([{"inlineData": {"mimeType": "image/png", "data": _b64_png(draft)}, "thought": True}])
    text = ""
    if plan.with_text or marker == "[no_image]":
        if marker == "[no_image]":
            text = f"I could not produce an image for: {subject[:200]}"
        elif plan.inputs:
            text = f"Here is the edited image: {subject[:200]}"
        else:
            text = f"Here is your image of {subject[:200]}"
        # The first part after the thoughts carries a signature.
        yield candidate([{"text": text, "thoughtSignature": sign(text.encode())}])
    text_tokens = _tokens(text) if text else 0
    if marker == "[no_image]":
        usage = _usage(prompt_tokens, text_tokens, 0, thought_tokens)
        yield candidate([], finishReason="NO_IMAGE") | {"usageMetadata": usage}
        return
    image = await asyncio.to_thread(_render, plan)
    png = await asyncio.to_thread(imaging.encode_image, image, "png")
    data = base64.b64encode(png).decode()
    image_tokens = model.image_tokens[plan.tier]
    usage = _usage(prompt_tokens, text_tokens, image_tokens, thought_tokens)
    part = {"inlineData": {"mimeType": "image/png", "data": data}, "thoughtSignature": sign(png)}
    del png
    # The final image, the finish reason and the cumulative usage arrive in the last chunk.
    yield candidate([part], finishReason="STOP") | {"usageMetadata": usage}


def _usage(prompt: int, text: int, image: int, thoughts: int) -> dict[str, Any]:
    candidates = text + image
    usage: dict[str, Any] = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": candidates,
        "totalTokenCount": prompt + candidates + thoughts,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
        "candidatesTokensDetails": [
            d for d in ({"modality": "IMAGE", "tokenCount": image}, {"modality": "TEXT", "tokenCount": text})
            if d["tokenCount"]
        ],
    }
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    return usage


def merge(frames: list[dict[str, Any]]) -> dict[str, Any]:
    """The buffered answer: every chunk's parts in order, the last finish reason and usage."""
    merged: dict[str, Any] = {}
    parts: list[dict[str, Any]] = []
    finish = None
    has_candidate = False
    for frame in frames:
        for key in ("modelVersion", "responseId", "usageMetadata", "promptFeedback"):
            if key in frame:
                merged[key] = frame[key]
        for cand in frame.get("candidates") or []:
            has_candidate = True
            parts.extend((cand.get("content") or {}).get("parts") or [])
            finish = cand.get("finishReason") or finish
    if has_candidate:
        candidate: dict[str, Any] = {"index": 0, "finishReason": finish or "STOP"}
        if parts:
            candidate["content"] = {"role": "model", "parts": parts}
        merged = {"candidates": [candidate], **merged}
    return merged


def _authorize(request: Request) -> None:
    if not (request.headers.get("x-goog-api-key") or request.query.get("key")):
        raise GeminiError(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers. Please use an API key.")


def _model(name: str) -> SandboxModel:
    model = MODELS.get(name)
    if model is None:
        raise GeminiError(
            404, "NOT_FOUND",
            f"models/{name} is not found for API version v1beta, or is not supported for generateContent.",
        )
    return model


def _body(request: Request) -> dict[str, Any]:
    try:
        body = request.json()
    except orjson.JSONDecodeError as exc:
        raise GeminiError(400, "INVALID_ARGUMENT", f"Invalid JSON payload received. {exc}") from exc
    if not isinstance(body, dict):
        raise GeminiError(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
    return body


@route("POST", r"/v1beta/models/(?P<model>[^/:]+):generateContent")
async def generate_content(request: Request) -> Response:
    try:
        _authorize(request)
        name = request.params["model"]
        model = _model(name)
        body = _body(request)
        frames = [frame async for frame in _frames(name, model, body, _plan(model, body))]
    except GeminiError as exc:
        return exc.response()
    return json_response(merge(frames))


@route("POST", r"/v1beta/models/(?P<model>[^/:]+):countTokens")
async def count_tokens(request: Request) -> Response:
    """``contents`` or a whole ``generateContentRequest``, counted as the generation counts its prompt."""
    try:
        _authorize(request)
        _model(request.params["model"])
        body = _body(request)
    except GeminiError as exc:
        return exc.response()
    inner = body.get("generateContentRequest")
    counted = inner if isinstance(inner, dict) else body
    try:
        _check_shape(counted.get("contents") or [])
    except GeminiError as exc:
        return exc.response()
    total = _prompt_tokens(counted)
    return json_response({"totalTokens": total, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": total}]})


@route("POST", r"/v1beta/models/(?P<model>[^/:]+):streamGenerateContent")
async def stream_generate_content(request: Request) -> Response:
    try:
        _authorize(request)
        name = request.params["model"]
        model = _model(name)
        body = _body(request)
        plan = _plan(model, body)  # validate before the 200 is sent, as the vendor does
    except GeminiError as exc:
        return exc.response()

    async def events() -> AsyncIterator[bytes]:
        delay = chunk_delay()
        first = True
        async for frame in _frames(name, model, body, plan):
            if not first and delay:
                await asyncio.sleep(delay)
            first = False
            # The vendor's native stream uses CRLF line endings.
            yield b"data: " + orjson.dumps(frame) + b"\r\n\r\n"

    if request.query.get("alt") != "sse":
        async def array() -> AsyncIterator[bytes]:
            yield orjson.dumps([frame async for frame in _frames(name, model, body, plan)])

        return Response(stream=array())
    return sse_response(events())
