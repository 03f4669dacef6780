"""What the fake upstream answers: real PNG bytes and vendor-shaped bodies, built once at start-up.

Every byte a response carries is prepared before the first request, so the fake spends its CPU
on HTTP only and never becomes the bottleneck of the thing being measured.
"""

from __future__ import annotations

import base64
import io
import time

import numpy as np
import orjson
from PIL import Image

# Base64 grows bytes by 4/3: these PNG sizes give ~1.5 MB and ~15 MB image frames on the wire.
IMAGE_1K_FRAME_BYTES = 1_500_000
IMAGE_4K_FRAME_BYTES = 15_000_000
SIZE_1K = (1024, 1024)
SIZE_4K = (5504, 3072)  # the 16:9 4K size of the Gemini 3.1 image table

RESPONSE_ID = b"resp_bench0001"  # the fake gives each response its own in its place
CHAT_TEXT = "Hello! This is a short answer from the benchmark upstream, one token at a time."


def noisy_png(width: int, height: int, target_bytes: int, seed: int = 7) -> bytes:
    """A real PNG of about ``target_bytes``: a smooth gradient (compresses to almost nothing)
    with two bits of noise on the first rows (does not compress), as many rows as the target needs."""
    rng = np.random.default_rng(seed)
    x = np.linspace(0, 252, width, dtype=np.float32)[None, :]
    y = np.linspace(0, 252, height, dtype=np.float32)[:, None]
    gradient = np.stack(
        [np.broadcast_to(x, (height, width)), np.broadcast_to(y, (height, width)),
         np.broadcast_to((x + y) / 2, (height, width))], axis=-1,
    ).astype(np.uint8) & np.uint8(0xFC)
    noise = rng.integers(0, 4, size=(height, width, 3), dtype=np.uint8)

    def encode(noisy_rows: int) -> bytes:
        pixels = gradient.copy()
        pixels[:noisy_rows] |= noise[:noisy_rows]
        out = io.BytesIO()
        Image.fromarray(pixels, "RGB").save(out, "PNG", compress_level=1)
        return out.getvalue()

    # One calibration encode: a noisy row costs about the same number of bytes everywhere.
    full = encode(height)
    if len(full) <= target_bytes:
        return full
    return encode(max(1, round(height * target_bytes / len(full))))


def png_for_frame(frame_bytes: int, size: tuple[int, int]) -> bytes:
    return noisy_png(size[0], size[1], frame_bytes * 3 // 4)


class Payloads:
    """The images (as base64) and the per-model bodies derived from them, cached by model name."""

    def __init__(self, *, small: bool = False) -> None:
        started = time.perf_counter()
        # ``small`` keeps tests fast; the benchmark always uses the real sizes.
        scale = 50 if small else 1
        self.image_1k_png = png_for_frame(IMAGE_1K_FRAME_BYTES // scale, SIZE_1K if not small else (256, 256))
        self.image_4k_png = png_for_frame(IMAGE_4K_FRAME_BYTES // scale, SIZE_4K if not small else (512, 288))
        self.image_1k_b64 = base64.b64encode(self.image_1k_png)
        self.image_4k_b64 = base64.b64encode(self.image_4k_png)
        self.build_seconds = time.perf_counter() - started
        self._cache: dict[tuple[str, str], object] = {}

    # -- OpenAI chat completions (reference §6) --------------------------------------------------
    def chat_completion(self, model: str) -> bytes:
        key = ("chat", model)
        if key not in self._cache:
            self._cache[key] = orjson.dumps({
                "id": "chatcmpl-bench0001", "object": "chat.completion", "created": 1757000000,
                "model": model, "system_fingerprint": "fp_bench", "service_tier": "default",
                "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                             "message": {"role": "assistant", "content": CHAT_TEXT, "refusal": None,
                                         "annotations": []}}],
                "usage": chat_usage(),
            })
        return self._cache[key]  # type: ignore[return-value]

    def chat_chunks(self, model: str, include_usage: bool, chunks: int) -> list[bytes]:
        """SSE frames: role chunk, content chunks, finish chunk, optional usage chunk, ``[DONE]``."""
        key = (f"chat-stream-{include_usage}-{chunks}", model)
        if key not in self._cache:
            head = {"id": "chatcmpl-bench0001", "object": "chat.completion.chunk", "created": 1757000000,
                    "model": model, "system_fingerprint": "fp_bench"}
            usage_field = {"usage": None} if include_usage else {}

            def chunk(delta: dict, finish: str | None = None) -> bytes:
                body = {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                             "finish_reason": finish}], **usage_field}
                return b"data: " + orjson.dumps(body) + b"\n\n"

            words = split_tokens(CHAT_TEXT, chunks)
            frames = [chunk({"role": "assistant", "content": "", "refusal": None})]
            frames += [chunk({"content": w}) for w in words]
            frames.append(chunk({}, "stop"))
            if include_usage:
                frames.append(b"data: " + orjson.dumps({**head, "choices": [], "usage": chat_usage()}) + b"\n\n")
            frames.append(b"data: [DONE]\n\n")
            self._cache[key] = frames
        return self._cache[key]  # type: ignore[return-value]

    # -- Anthropic messages (reference §7.2, §7.3) -----------------------------------------------
    def message(self, model: str) -> bytes:
        key = ("message", model)
        if key not in self._cache:
            self._cache[key] = orjson.dumps({
                "id": "msg_bench0001", "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": CHAT_TEXT}], "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {**MESSAGES_USAGE, "output_tokens": 18},
            })
        return self._cache[key]  # type: ignore[return-value]

    def message_events(self, model: str, chunks: int) -> list[bytes]:
        """``message_start``, a text block (start, ``ping``, deltas, stop), ``message_delta``, ``message_stop``."""
        key = (f"message-stream-{chunks}", model)
        if key not in self._cache:
            start = {"id": "msg_bench0001", "type": "message", "role": "assistant", "content": [], "model": model,
                     "stop_reason": None, "stop_sequence": None, "usage": {**MESSAGES_USAGE, "output_tokens": 1}}
            events = [("message_start", {"message": start}),
                      ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
                      ("ping", {})]
            events += [("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": w}})
                       for w in split_tokens(CHAT_TEXT, chunks)]
            events += [("content_block_stop", {"index": 0}),
                       ("message_delta", {"delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                          "usage": {"output_tokens": 18}}),
                       ("message_stop", {})]
            self._cache[key] = [named_event(name, {"type": name, **data}) for name, data in events]
        return self._cache[key]  # type: ignore[return-value]

    # -- OpenAI responses (reference §8.1, §8.2) ---------------------------------------------------
    def response(self, model: str) -> bytes:
        key = ("response", model)
        if key not in self._cache:
            self._cache[key] = orjson.dumps(response_object(model, "completed", [output_message("completed")],
                                                            RESPONSES_USAGE))
        return self._cache[key]  # type: ignore[return-value]

    def response_events(self, model: str, chunks: int) -> list[bytes]:
        """The typical text order: created, in_progress, the message item and its part, the text
        deltas, then each ``done`` and ``response.completed``; every event numbered."""
        key = (f"response-stream-{chunks}", model)
        if key not in self._cache:
            item = {"item_id": "msg_bench0001", "output_index": 0, "content_index": 0}
            part = {"type": "output_text", "text": "", "annotations": []}
            events = [("response.created", {"response": response_object(model, "in_progress", [], None)}),
                      ("response.in_progress", {"response": response_object(model, "in_progress", [], None)}),
                      ("response.output_item.added", {"output_index": 0, "item": output_message("in_progress", "")}),
                      ("response.content_part.added", {**item, "part": part})]
            events += [("response.output_text.delta", {**item, "delta": w, "logprobs": []})
                       for w in split_tokens(CHAT_TEXT, chunks)]
            events += [("response.output_text.done", {**item, "text": CHAT_TEXT, "logprobs": []}),
                       ("response.content_part.done", {**item, "part": {**part, "text": CHAT_TEXT}}),
                       ("response.output_item.done", {"output_index": 0, "item": output_message("completed")}),
                       ("response.completed", {"response": response_object(
                           model, "completed", [output_message("completed")], RESPONSES_USAGE)})]
            self._cache[key] = [named_event(name, {"type": name, "sequence_number": n, **data})
                                for n, (name, data) in enumerate(events)]
        return self._cache[key]  # type: ignore[return-value]

    # -- Gemini generateContent (reference §1.4, §1.6) ------------------------------------------
    def gemini_response(self, model: str, four_k: bool) -> bytes:
        key = (f"gemini-{four_k}", model)
        if key not in self._cache:
            self._cache[key] = b"".join(gemini_frames(model, self._b64(four_k), merged=True))
        return self._cache[key]  # type: ignore[return-value]

    def gemini_stream(self, model: str, four_k: bool) -> list[bytes]:
        """Gemini ``alt=sse``: CRLF framing, a text chunk, then the whole image in one event."""
        key = (f"gemini-stream-{four_k}", model)
        if key not in self._cache:
            self._cache[key] = [b"data: " + frame + b"\r\n\r\n"
                                for frame in gemini_frames(model, self._b64(four_k), merged=False)]
        return self._cache[key]  # type: ignore[return-value]

    def _b64(self, four_k: bool) -> bytes:
        return self.image_4k_b64 if four_k else self.image_1k_b64


def chat_usage() -> dict:
    return {"prompt_tokens": 14, "completion_tokens": 18, "total_tokens": 32,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}


MESSAGES_USAGE = {"input_tokens": 14, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                  "service_tier": "standard"}
RESPONSES_USAGE = {"input_tokens": 14, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 18,
                   "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 32}


def named_event(name: str, data: dict) -> bytes:
    """One SSE event as the messages and responses formats write it: its name, then its JSON."""
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


def output_message(status: str, text: str = CHAT_TEXT) -> dict:
    content = [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}] if text else []
    return {"type": "message", "id": "msg_bench0001", "role": "assistant", "status": status, "content": content}


def response_object(model: str, status: str, output: list, usage: dict | None) -> dict:
    return {"id": RESPONSE_ID.decode(), "object": "response", "created_at": 1757000000, "status": status,
            "model": model, "output": output, "error": None, "incomplete_details": None, "instructions": None,
            "metadata": {}, "parallel_tool_calls": True, "temperature": 1.0, "top_p": 1.0, "tool_choice": "auto",
            "tools": [], "previous_response_id": None, "text": {"format": {"type": "text"}},
            "truncation": "disabled", "usage": usage}


def split_tokens(text: str, count: int) -> list[str]:
    """``text`` cut into ``count`` pieces that join back to it (a stand-in for tokens)."""
    count = max(1, min(count, len(text)))
    step, extra = divmod(len(text), count)
    pieces, at = [], 0
    for i in range(count):
        size = step + (1 if i < extra else 0)
        pieces.append(text[at:at + size])
        at += size
    return pieces


def gemini_frames(model: str, image_b64: bytes, *, merged: bool) -> list[bytes]:
    """The JSON of each response object; ``merged`` gives the one buffered body instead."""
    usage = {"promptTokenCount": 12, "candidatesTokenCount": 1130, "totalTokenCount": 1142,
             "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 12}],
             "candidatesTokensDetails": [{"modality": "IMAGE", "tokenCount": 1120},
                                         {"modality": "TEXT", "tokenCount": 10}]}
    text_part = {"text": "Here is your image.", "thoughtSignature": "YmVuY2gtc2lnLXRleHQ="}
    # The image is spliced in as raw bytes: orjson would copy 15 MB through a str for nothing.
    marker = "__BENCH_IMAGE_DATA__"
    image_part = {"inlineData": {"mimeType": "image/png", "data": marker},
                  "thoughtSignature": "YmVuY2gtc2lnLWltYWdl"}

    def response(parts: list, last: bool) -> bytes:
        candidate: dict = {"content": {"role": "model", "parts": parts}, "index": 0}
        body: dict = {"candidates": [candidate], "modelVersion": model, "responseId": "bench-response-1"}
        if last:
            candidate["finishReason"] = "STOP"
            body["usageMetadata"] = usage
        encoded = orjson.dumps(body)
        return encoded.replace(marker.encode(), image_b64, 1) if image_part in parts else encoded

    if merged:
        return [response([text_part, image_part], last=True)]
    return [response([text_part], last=False), response([image_part], last=True)]
