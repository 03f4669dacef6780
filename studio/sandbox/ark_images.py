"""Ark Seedream protocol, offline: ``POST /api/v3/images/generations`` (reference §3).

Real results: text-to-image, image-to-image and multi-reference composition; sequential sets
("group images") whose length comes from the prompt, at most ``max_images`` (an upper bound, as
at the vendor: a prompt asking for more simply gets that many); layer decomposition into positioned RGBA layers; a
visible watermark by default; prompt optimization returning ``revised_prompt``. Results are
``url`` by default, served by this app at ``/api/v3/results/<id>.<ext>`` for 24 hours, or
``b64_json``. Streaming sends ``image_generation.partial_succeeded`` / ``partial_failed`` /
``completed`` then ``data: [DONE]``.
"""

from __future__ import annotations

import asyncio
import base64
import math
import re
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from asgiref.sync import sync_to_async
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from PIL import Image

from studio.models.sandbox import SandboxFile
from studio.sandbox import imaging
from studio.sandbox.app import Request, Response, json_response, route, sse_response
from studio.sandbox.gemini import chunk_delay
from studio.sandbox.openai_images import decode_picture

MODELS = {
    "dola-seedream-5-0-pro-260628": {"layers": True, "formats": ("jpeg", "png", "webp")},
    "seedream-5-0-260128": {"layers": False, "formats": ("jpeg", "png")},
    "doubao-seedream-5-0-260128": {"layers": False, "formats": ("jpeg", "png")},
    "seedream-4-5-251128": {"layers": False, "formats": ("jpeg",)},
    "doubao-seedream-4-5-251128": {"layers": False, "formats": ("jpeg",)},
}
TIER_SIDE = {"1K": 1024, "2K": 2048, "4K": 4096}
MIN_PIXELS, MAX_PIXELS = 1280 * 720, 4096 * 4096
MAX_REFERENCES, MAX_TOTAL = 14, 15
RESULT_TTL = 24 * 3600
RESULTS_DIR = "sandbox/results"
_NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                 "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20}
_COUNT_RE = re.compile(r"\b(\d{1,2}|" + "|".join(_NUMBER_WORDS) + r")\s+(?:\w+\s+){0,2}?"
                       r"(?:images|pictures|frames|panels|steps|scenes|shots|views|variations|stages)\b", re.I)
DEFAULT_SET = 4


class ArkError(Exception):
    def __init__(self, status: int, code: str, message: str, param: str = "", kind: str = "BadRequest") -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.param, self.kind = status, code, message, param, kind

    def response(self) -> Response:
        request_id = uuid.uuid4().hex
        body = {"error": {"code": self.code, "message": f"{self.message} Request ID: {request_id}",
                          "param": self.param, "type": self.kind}}
        return json_response(body, self.status, headers={"x-request-id": request_id})


def _invalid(param: str, why: str) -> ArkError:
    return ArkError(400, "InvalidParameter", f"The parameter `{param}` specified in the request is not valid: {why}.",
                    param)


@dataclass
class Job:
    model: str
    prompt: str
    references: list[Image.Image]
    size: tuple[int, int]
    sequential: bool
    max_images: int
    layers: bool
    watermark: bool
    response_format: str
    output_format: str
    optimize_mode: str | None
    stream: bool
    items: list[dict[str, Any]] = field(default_factory=list)


def _reference(value: Any, index: int) -> Image.Image:
    param = "image"
    if not isinstance(value, str) or not value:
        raise _invalid(param, "expected a URL or a base64 data URI")
    if value.startswith("data:"):
        if ";base64," not in value:
            raise _invalid(param, "a data URI must be base64 encoded")
        payload = value.split(";base64,", 1)[1]
    elif value.startswith(("http://", "https://")):
        found = re.search(r"/api/v3/results/([0-9a-f]+)\.", value)
        stored = _load(found.group(1)) if found else None
        if stored is None:
            raise ArkError(400, "InvalidParameter", "The sandbox cannot download external image URLs; send a data "
                           "URI.", param)
        return decode_picture(stored[0])
    else:
        payload = value
    try:
        return decode_picture(base64.b64decode(payload, validate=True))
    except ValueError:
        raise ArkError(400, "InvalidImage", f"image {index} could not be decoded.", param) from None


def _size(value: Any, references: list[Image.Image]) -> tuple[int, int]:
    if value in (None, ""):
        return 2048, 2048
    if isinstance(value, str) and value.upper() in TIER_SIDE:
        side = TIER_SIDE[value.upper()]
        if references:  # a tier keeps the reference's aspect ratio at the tier's pixel count
            ratio = references[0].width / references[0].height
            width = round(side * math.sqrt(ratio) / 16) * 16
            height = round(side / math.sqrt(ratio) / 16) * 16
            return max(16, width), max(16, height)
        return side, side
    match = re.fullmatch(r"(\d{2,5})[x*](\d{2,5})", str(value))
    if not match:
        raise _invalid("size", "use 1K, 2K, 4K or WIDTHxHEIGHT")
    width, height = int(match.group(1)), int(match.group(2))
    if not MIN_PIXELS <= width * height <= MAX_PIXELS or not 1 / 16 <= width / height <= 16:
        raise _invalid("size", f"total pixels must be in [{MIN_PIXELS}, {MAX_PIXELS}] and the ratio in [1/16, 16]")
    return width, height


def parse_job(body: dict[str, Any]) -> Job:
    model = str(body.get("model") or "")
    spec = MODELS.get(model)
    if spec is None:
        raise ArkError(404, "InvalidEndpointOrModel.NotFound",
                       f"The model or endpoint {model} does not exist or you do not have access to it.", "model",
                       "NotFound")
    layers = bool(body.get("layer_decomposition"))
    prompt = body.get("prompt")
    if layers and not spec["layers"]:
        raise _invalid("layer_decomposition", f"not supported by {model}")
    if not layers and (not isinstance(prompt, str) or not prompt.strip()):
        raise ArkError(400, "MissingParameter", "The request failed because it is missing `prompt` parameter.",
                       "prompt")
    raw = body.get("image")
    sources = raw if isinstance(raw, list) else ([raw] if raw else [])
    if len(sources) > MAX_REFERENCES:
        raise _invalid("image", f"at most {MAX_REFERENCES} reference images are allowed")
    references = [_reference(value, i) for i, value in enumerate(sources)]
    if layers and len(references) > 1:
        raise _invalid("image", "layer decomposition takes one image")
    options = body.get("sequential_image_generation_options") or {}
    max_images = options.get("max_images", 15) if isinstance(options, dict) else 15
    if not isinstance(max_images, int) or isinstance(max_images, bool) or not 1 <= max_images <= 15:
        raise _invalid("sequential_image_generation_options.max_images", "must be an integer in [1, 15]")
    sequential = body.get("sequential_image_generation", "disabled")
    if sequential not in ("auto", "disabled"):
        raise _invalid("sequential_image_generation", "must be auto or disabled")
    response_format = body.get("response_format") or "url"
    if response_format not in ("url", "b64_json"):
        raise _invalid("response_format", "must be url or b64_json")
    output_format = body.get("output_format") or ("png" if layers else "jpeg")
    if output_format not in spec["formats"]:
        raise _invalid("output_format", f"must be one of {', '.join(spec['formats'])}")
    optimize = body.get("optimize_prompt_options")
    mode = optimize.get("mode", "standard") if isinstance(optimize, dict) else None
    if mode is not None and mode not in ("standard", "fast"):
        raise _invalid("optimize_prompt_options.mode", "must be standard or fast")
    return Job(
        model=model, prompt=str(prompt or ""), references=references, size=_size(body.get("size"), references),
        sequential=sequential == "auto", max_images=max_images, layers=layers,
        watermark=body.get("watermark", True) is not False, response_format=response_format,
        output_format=output_format, optimize_mode=mode, stream=bool(body.get("stream")),
    )


def requested_count(prompt: str) -> int:
    """How many images a sequential prompt asks for ("a set of 5 images", "four panels")."""
    match = _COUNT_RE.search(prompt)
    if not match:
        return DEFAULT_SET
    word = match.group(1).lower()
    return int(word) if word.isdigit() else _NUMBER_WORDS[word]


def revised(prompt: str, mode: str | None) -> str | None:
    if mode is None:
        return None
    subject = " ".join(prompt.split()) or "the image"
    if mode == "fast":
        return f"{subject}, clean composition, sharp focus"
    return (f"{subject}, rendered with a balanced composition, soft natural lighting, rich but harmonious "
            "colours and fine detail on the main subject")


def _store(data: bytes, mime: str) -> str:
    """Keep a result for its URL (in the database and the media storage: every process serves it)."""
    key = uuid.uuid4().hex
    name = default_storage.save(f"{RESULTS_DIR}/{key}.{mime.split('/')[-1]}", ContentFile(data))
    SandboxFile.objects.create(key=key, name=name, mime=mime, expires_at=time.time() + RESULT_TTL)
    return key


def _load(key: str) -> tuple[bytes, str] | None:
    entry = SandboxFile.objects.filter(key=key, expires_at__gt=time.time()).first()
    if entry is None:
        return None
    with default_storage.open(entry.name, "rb") as handle:
        return handle.read(), entry.mime


def prune_results(now: float | None = None) -> int:
    """Delete expired results and their files; the count removed."""
    expired = list(SandboxFile.objects.filter(expires_at__lte=now or time.time()))
    for entry in expired:
        default_storage.delete(entry.name)
        entry.delete()
    return len(expired)


def _deliver(job: Job, picture: Image.Image, host: str, fmt: str | None = None) -> dict[str, Any]:
    fmt = fmt or job.output_format
    if job.watermark:
        picture = imaging.stamp_watermark(picture)
    transparent = fmt in ("png", "webp") and picture.mode == "RGBA"
    data = imaging.encode_image(picture, fmt, transparent=transparent)
    item: dict[str, Any] = {"size": f"{picture.width}x{picture.height}", "output_format": fmt}
    if job.response_format == "b64_json":
        item["b64_json"] = base64.b64encode(data).decode()
    else:
        key = _store(data, f"image/{fmt}")
        item["url"] = f"http://{host}/api/v3/results/{key}.{fmt}"
    return item


def _pictures(job: Job) -> list[Image.Image]:
    """The pictures to return: a sequential set as long as the prompt asks, up to ``max_images``."""
    width, height = job.size
    seed = imaging.seed_from("seedream", job.model, job.prompt, width, height)
    if job.sequential:
        wanted = requested_count(job.prompt)
        allowed = min(job.max_images, MAX_TOTAL - len(job.references))
        count = min(wanted, allowed)
        reference = job.references[0] if job.references else None
        return imaging.sequential_set(job.prompt, count, width, height, seed=seed, reference=reference)
    if len(job.references) > 1:
        return [imaging.render_composition(job.references, job.prompt, width, height, seed=seed)]
    if job.references:
        return [imaging.render_edit(job.references[0], job.prompt, seed=seed, size=(width, height))]
    return [imaging.render_prompt_image(job.prompt, width, height, seed=seed)]


def build_items(job: Job, host: str) -> list[dict[str, Any]]:
    """Every result item, in order (runs in a worker thread: Pillow work)."""
    note = revised(job.prompt, job.optimize_mode)
    if job.layers:
        base = job.references[0] if job.references else imaging.render_prompt_image(
            job.prompt or "layered poster", *job.size, seed=imaging.seed_from("seedream-layers", job.prompt))
        items = []
        for layer in imaging.decompose_layers(base):
            if layer.z_index == 0:
                item = _deliver(job, layer.image, host, "jpeg" if job.output_format == "jpeg" else job.output_format)
            else:
                item = _deliver(Job(**{**job.__dict__, "watermark": False}), layer.image, host, "png")
                item["bounding_box"] = {"absolute": list(layer.bbox), "normalized": list(layer.normalized)}
            item.update(z_index=layer.z_index, name=layer.name, description=layer.description)
            items.append(item)
        return items
    items = [_deliver(job, picture, host) for picture in _pictures(job)]
    if note:
        for item in items:
            if "error" not in item:
                item["revised_prompt"] = note
    return items


def usage(job: Job, items: list[dict[str, Any]]) -> dict[str, Any]:
    made = [item for item in items if "error" not in item]
    tokens = 0
    for item in made:
        width, _, height = item["size"].partition("x")
        tokens += int(width) * int(height) // 256
    result: dict[str, Any] = {"generated_images": len(made), "output_tokens": tokens, "total_tokens": tokens}
    if job.layers:
        result["input_images"] = max(1, len(job.references))
    return result


def _authorize(request: Request) -> None:
    header = request.headers.get("authorization", "")
    if not header.lower().startswith("bearer ") or not header[7:].strip():
        raise ArkError(401, "AuthenticationError", "the API key or AK/SK in the request is missing or invalid.", "",
                       "Unauthorized")


async def _events(job: Job, host: str) -> AsyncIterator[bytes]:
    items = await asyncio.to_thread(build_items, job, host)
    delay = chunk_delay()
    created = int(time.time())
    for index, item in enumerate(items):
        kind = "image_generation.partial_failed" if "error" in item else "image_generation.partial_succeeded"
        payload = {"type": kind, "model": job.model, "created": created, "image_index": index, **item}
        yield b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(payload) + b"\n\n"
        if delay:
            await asyncio.sleep(delay)
    done = {"type": "image_generation.completed", "model": job.model, "created": created,
            "usage": usage(job, items)}
    yield b"event: image_generation.completed\ndata: " + orjson.dumps(done) + b"\n\n"
    yield b"data: [DONE]\n\n"


@route("POST", r"/api/v3/images/generations")
async def generations(request: Request) -> Response:
    try:
        _authorize(request)
        try:
            body = request.json()
        except orjson.JSONDecodeError:
            raise _invalid("body", "the body is not valid JSON") from None
        if not isinstance(body, dict):
            raise _invalid("body", "the body must be a JSON object")
        job = await asyncio.to_thread(parse_job, body)
    except ArkError as exc:
        return exc.response()
    host = request.headers.get("host", "sandbox.studio.internal")
    if job.stream:
        return sse_response(_events(job, host))
    items = await asyncio.to_thread(build_items, job, host)
    return json_response({"model": job.model, "created": int(time.time()), "data": items,
                          "usage": usage(job, items)})


@route("GET", r"/api/v3/results/(?P<key>[0-9a-f]{32})\.(?P<ext>png|jpeg|webp)")
async def result_file(request: Request) -> Response:
    entry = await sync_to_async(_load)(request.params["key"])
    if entry is None:
        return json_response({"error": {"code": "NotFound", "message": "The result has expired or does not exist.",
                                         "param": "", "type": "NotFound"}}, 404)
    return Response(body=entry[0], content_type=entry[1], headers={"cache-control": "private, max-age=86400"})
