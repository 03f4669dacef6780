"""OpenAI Images protocol, offline: ``/v1/images/generations`` and ``/v1/images/edits``.

Faithful where clients can tell (reference §2): GPT-image sizes, qualities and formats, ``n``
distinct pictures, base64 results, the resolved ``background``/``quality``/``size`` echo, token
usage, ``{"error": {message, type, param, code}}`` bodies, multipart *and* JSON edits, and the
``image_generation.*`` / ``image_edit.*`` SSE events with ``partial_images`` previews. Edits
really use the inputs: a mask (alpha 0 = edit) inpaints, several images compose, one image is
restyled. ``background`` is only the setting ``transparent|opaque|auto``, as at the vendor.
"""

from __future__ import annotations

import asyncio
import base64
import email.parser
import email.policy
import io
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from PIL import Image

from studio.sandbox import imaging
from studio.sandbox.app import Request, Response, json_response, route, sse_response
from studio.sandbox.gemini import chunk_delay

MODELS = {"gpt-image-1.5", "gpt-image-1", "gpt-image-1-mini", "gpt-image-2", "chatgpt-image-latest"}
SIZES = {"1024x1024": (1024, 1024), "1536x1024": (1536, 1024), "1024x1536": (1024, 1536)}
QUALITIES = ("low", "medium", "high", "auto")
EDIT_QUALITIES = ("standard", "low", "medium", "high", "auto")
FORMATS = ("png", "jpeg", "webp")
BACKGROUNDS = ("transparent", "opaque", "auto")
# Output image tokens at 1024x1024 per quality (the vendor's published table); larger sizes scale.
OUTPUT_TOKENS = {"low": 272, "medium": 1056, "high": 4160}
INPUT_IMAGE_TOKENS = 194


def decode_picture(data: bytes) -> Image.Image:
    """Open uploaded image bytes fully (a truncated file fails here, not halfway through drawing)."""
    try:
        picture = Image.open(io.BytesIO(data))
        picture.load()
    except Exception as exc:
        raise ValueError("not a readable image") from exc
    return picture


class OpenAIError(Exception):
    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None,
                 kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code, self.kind = status, message, param, code, kind

    def response(self) -> Response:
        body = {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.code}}
        return json_response(body, self.status)


@dataclass
class Job:
    """One parsed request: what to draw and how to encode it."""

    model: str
    prompt: str
    n: int
    size: tuple[int, int] | None  # None: follow the input (edits) or 1024x1024
    quality: str
    output_format: str
    compression: int | None
    background: str
    partial_images: int
    stream: bool
    images: list[Image.Image] = field(default_factory=list)
    mask: Image.Image | None = None

    @property
    def transparent(self) -> bool:
        return self.background == "transparent"


def _authorize(request: Request) -> None:
    header = request.headers.get("authorization", "")
    if not header.lower().startswith("bearer ") or not header[7:].strip():
        raise OpenAIError(401, "You didn't provide an API key.", code="invalid_api_key",
                          kind="invalid_request_error")


def _int(value: Any, name: str, low: int, high: int, default: int | None) -> int | None:
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise OpenAIError(400, f"Invalid type for '{name}': expected an integer.", name, "invalid_type") from None
    if not low <= number <= high:
        raise OpenAIError(400, f"Invalid '{name}': must be between {low} and {high}, got {number}.", name,
                          "integer_out_of_range")
    return number


def _choice(value: Any, name: str, allowed: tuple[str, ...], default: str) -> str:
    if value is None or value == "":
        return default
    if value not in allowed:
        raise OpenAIError(400, f"Invalid value: '{value}'. Supported values are: "
                          + ", ".join(f"'{a}'" for a in allowed) + ".", name, "invalid_value")
    return str(value)


def _bool(value: Any) -> bool:
    return value is True or str(value).lower() in ("true", "1")


def _size(value: Any, model: str) -> tuple[int, int] | None:
    if value in (None, "", "auto"):
        return None
    if value in SIZES:
        return SIZES[value]
    if model == "gpt-image-2" and isinstance(value, str) and "x" in value:
        w, _, h = value.partition("x")
        if w.isdigit() and h.isdigit() and int(w) % 16 == 0 and int(h) % 16 == 0 \
                and int(w) * int(h) <= 3840 * 2160 and 1 / 3 <= int(w) / int(h) <= 3:
            return int(w), int(h)
    raise OpenAIError(400, f"Invalid value: '{value}'. Supported values are: '1024x1024', '1024x1536', "
                      "'1536x1024', and 'auto'.", "size", "invalid_value")


def parse_job(fields: dict[str, Any], *, edit: bool) -> Job:
    model = str(fields.get("model") or "gpt-image-1.5")
    if model not in MODELS:
        raise OpenAIError(404, f"The model '{model}' does not exist or you do not have access to it.", "model",
                          "model_not_found", kind="invalid_request_error")
    prompt = fields.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise OpenAIError(400, "Missing required parameter: 'prompt'.", "prompt", "missing_required_parameter")
    if len(prompt) > 32000:
        raise OpenAIError(400, "Invalid 'prompt': string too long. Expected a string with maximum length 32000.",
                          "prompt", "string_above_max_length")
    job = Job(
        model=model, prompt=prompt, n=_int(fields.get("n"), "n", 1, 10, 1) or 1,
        size=_size(fields.get("size"), model),
        quality=_choice(fields.get("quality"), "quality", EDIT_QUALITIES if edit else QUALITIES, "auto"),
        output_format=_choice(fields.get("output_format"), "output_format", FORMATS, "png"),
        compression=_int(fields.get("output_compression"), "output_compression", 0, 100, None),
        background=_choice(fields.get("background") if isinstance(fields.get("background"), str) else None,
                           "background", BACKGROUNDS, "auto"),
        partial_images=_int(fields.get("partial_images"), "partial_images", 0, 3, 0) or 0,
        stream=_bool(fields.get("stream")),
    )
    if job.transparent and job.output_format == "jpeg":
        raise OpenAIError(400, "Transparent background is not supported for output format 'jpeg'.",
                          "background", "invalid_value")
    return job


def _resolved_quality(quality: str) -> str:
    return {"auto": "medium", "standard": "medium"}.get(quality, quality)


def _output_tokens(job: Job, size: tuple[int, int]) -> int:
    per = OUTPUT_TOKENS[_resolved_quality(job.quality)]
    return round(per * size[0] * size[1] / (1024 * 1024))


def _usage(job: Job, size: tuple[int, int], images: int) -> dict[str, Any]:
    text = max(1, len(job.prompt.split()) * 4 // 3)
    image_in = INPUT_IMAGE_TOKENS * (len(job.images) + (job.mask is not None))
    output = _output_tokens(job, size) * images
    return {
        "input_tokens": text + image_in, "input_tokens_details": {"text_tokens": text, "image_tokens": image_in},
        "output_tokens": output, "output_tokens_details": {"image_tokens": output, "text_tokens": 0},
        "total_tokens": text + image_in + output,
    }


def _canvas(job: Job) -> tuple[int, int]:
    if job.size is not None:
        return job.size
    if job.images:
        return job.images[0].size
    return 1024, 1024


def render(job: Job, index: int) -> Image.Image:
    """Image ``index`` of the job: distinct per index, derived from the inputs when there are any."""
    seed = imaging.seed_from("openai-images", job.prompt, index, job.quality)
    width, height = _canvas(job)
    if job.images and job.mask is not None:
        picture = imaging.inpaint(job.images[0], job.mask, job.prompt, seed=seed)
        return picture if picture.size == (width, height) else picture.resize((width, height))
    if len(job.images) > 1:
        return imaging.render_composition(job.images, job.prompt, width, height, seed=seed)
    if job.images:
        return imaging.render_edit(job.images[0], job.prompt, seed=seed, size=(width, height))
    return imaging.render_prompt_image(job.prompt, width, height, seed=seed)


def encode(job: Job, picture: Image.Image) -> str:
    data = imaging.encode_image(picture, job.output_format, quality=job.compression, transparent=job.transparent)
    return base64.b64encode(data).decode()


def _echo(job: Job) -> dict[str, Any]:
    width, height = _canvas(job)
    return {
        "background": "transparent" if job.transparent else "opaque",
        "output_format": job.output_format,
        "quality": _resolved_quality(job.quality),
        "size": f"{width}x{height}",
    }


async def _buffered(job: Job) -> Response:
    data = []
    for index in range(job.n):
        picture = await asyncio.to_thread(render, job, index)
        data.append({"b64_json": await asyncio.to_thread(encode, job, picture)})
    return json_response({"created": int(time.time()), **_echo(job), "data": data,
                          "usage": _usage(job, _canvas(job), job.n)})


def _partial(job: Job, index: int, step: int) -> str:
    """A preview on the way to image ``index``: the same layout, coarser the earlier it comes."""
    width, height = _canvas(job)
    seed = imaging.seed_from("openai-images", job.prompt, index, job.quality)
    draft = imaging.render_thought_draft(job.prompt, width, height, seed=seed)
    final = render(job, index)
    blend = Image.blend(draft.convert("RGB"), final.convert("RGB"), (step + 1) / (job.partial_images + 1))
    return encode(job, blend)


def _event(name: str, payload: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps({"type": name, **payload}) + b"\n\n"


async def _stream(job: Job, prefix: str) -> AsyncIterator[bytes]:
    echo = _echo(job)
    delay = chunk_delay()
    usage_one = _usage(job, _canvas(job), 1)
    for index in range(job.n):
        for step in range(job.partial_images):
            b64 = await asyncio.to_thread(_partial, job, index, step)
            yield _event(f"{prefix}.partial_image", {"b64_json": b64, "partial_image_index": step,
                                                      "created_at": int(time.time()), **echo})
            if delay:
                await asyncio.sleep(delay)
        picture = await asyncio.to_thread(render, job, index)
        b64 = await asyncio.to_thread(encode, job, picture)
        yield _event(f"{prefix}.completed", {"b64_json": b64, "created_at": int(time.time()), **echo,
                                             "usage": usage_one})


def _json_fields(request: Request) -> dict[str, Any]:
    try:
        body = request.json()
    except orjson.JSONDecodeError:
        raise OpenAIError(400, "We could not parse the JSON body of your request.", None, "invalid_json") from None
    if not isinstance(body, dict):
        raise OpenAIError(400, "The request body must be a JSON object.", None, "invalid_json")
    return body


@route("POST", r"/v1/images/generations")
async def generations(request: Request) -> Response:
    try:
        _authorize(request)
        job = parse_job(_json_fields(request), edit=False)
    except OpenAIError as exc:
        return exc.response()
    if job.stream:
        return sse_response(_stream(job, "image_generation"))
    return await _buffered(job)


# -- edits -----------------------------------------------------------------------------------------


def parse_multipart(request: Request) -> tuple[dict[str, Any], dict[str, list[bytes]]]:
    """Form fields and files of a ``multipart/form-data`` body (stdlib parser; no extra dependency)."""
    head = f"Content-Type: {request.headers.get('content-type', '')}\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + request.body)
    if not message.is_multipart():
        raise OpenAIError(400, "Invalid multipart body.", None, "invalid_multipart")
    fields: dict[str, Any] = {}
    files: dict[str, list[bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name:
            continue
        payload = part.get_payload(decode=True) or b""
        if part.get_filename() is not None:
            files.setdefault(str(name), []).append(payload)
        else:
            fields[str(name)] = payload.decode("utf-8", "replace")
    return fields, files


def _picture(data: bytes, name: str) -> Image.Image:
    try:
        return decode_picture(data)
    except ValueError:
        raise OpenAIError(400, f"Invalid image file for '{name}': the file could not be decoded.", name,
                          "invalid_image_file") from None


def _data_url(value: Any, name: str) -> Image.Image:
    if isinstance(value, dict):
        value = value.get("image_url") or value.get("file_id")
    if not isinstance(value, str) or not value.startswith("data:") or ";base64," not in value:
        raise OpenAIError(400, f"Invalid '{name}': the sandbox accepts data URLs only.", name, "invalid_image_url")
    try:
        data = base64.b64decode(value.split(";base64,", 1)[1], validate=True)
    except ValueError:
        raise OpenAIError(400, f"Invalid '{name}': bad base64 data.", name, "invalid_base64") from None
    return _picture(data, name)


def edit_job(request: Request) -> Job:
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        fields, files = parse_multipart(request)
        images = [_picture(d, "image") for key in ("image", "image[]") for d in files.get(key, [])]
        mask = _picture(files["mask"][0], "mask") if files.get("mask") else None
        if files.get("background"):  # ``background`` is a setting (transparent|opaque|auto), never a file
            raise OpenAIError(400, "Invalid type for 'background': expected one of 'transparent', 'opaque' or "
                              "'auto', but got a file instead.", "background", "invalid_type")
    else:
        fields = _json_fields(request)
        sources = fields.get("images") if isinstance(fields.get("images"), list) else []
        images = [_data_url(item, f"images[{i}]") for i, item in enumerate(sources)]
        mask = _data_url(fields["mask"], "mask") if fields.get("mask") else None
    if not images:
        raise OpenAIError(400, "Missing required parameter: 'image'.", "image", "missing_required_parameter")
    if len(images) > 16:
        raise OpenAIError(400, "Invalid 'image': at most 16 images are allowed.", "image", "array_above_max_length")
    if mask is not None and mask.size != images[0].size:
        raise OpenAIError(400, "Invalid mask image: the mask must have the same dimensions as the image.", "mask",
                          "invalid_mask_size")
    job = parse_job(fields, edit=True)
    job.images, job.mask = images, mask
    return job


@route("POST", r"/v1/images/edits")
async def edits(request: Request) -> Response:
    try:
        _authorize(request)
        job = edit_job(request)
    except OpenAIError as exc:
        return exc.response()
    if job.stream:
        return sse_response(_stream(job, "image_edit"))
    return await _buffered(job)
