"""The scenarios and the request each target receives for them.

Every target is asked the same thing in its own dialect: the direct path and the raw relay speak
the vendor's model names and paths, the gateway and LiteLLM the platform's model names.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson


@dataclass(frozen=True)
class Scenario:
    name: str
    label: str
    family: str  # "chat", "messages", "responses" or "image"
    stream: bool
    large: bool = False  # the 4K frame: peak RSS is what matters


SCENARIOS: dict[str, Scenario] = {s.name: s for s in (
    Scenario("chat", "chat, buffered", "chat", stream=False),
    Scenario("chat_stream", "chat, streamed", "chat", stream=True),
    Scenario("messages_stream", "messages, streamed", "messages", stream=True),
    Scenario("responses_stream", "responses, streamed", "responses", stream=True),
    Scenario("image", "image 1.5 MB, buffered", "image", stream=False),
    Scenario("image_4k_stream", "4K frame 15 MB, streamed", "image", stream=True, large=True),
)}
TEXT_SCENARIOS = [name for name, scenario in SCENARIOS.items() if scenario.family != "image"]


@dataclass(frozen=True)
class Request:
    path: str
    body: bytes
    headers: dict[str, str]


@dataclass(frozen=True)
class Dialect:
    """How one target is addressed: model names, path style and auth headers."""

    chat_model: str | None  # None: this target has no chat scenario (the responses format's model too)
    image_model: str | None  # None: this target has no image scenarios
    image_prefix: str  # "/v1beta" for the vendor itself, "/v1" for relays
    image_key_header: str
    key: str
    messages_model: str | None = None  # None: this target has no messages scenario

    def request(self, scenario: Scenario) -> Request | None:
        if scenario.family == "chat":
            return None if self.chat_model is None else chat_request(self.chat_model, scenario.stream, self.key)
        if scenario.family == "responses":
            return None if self.chat_model is None else responses_request(self.chat_model, scenario.stream, self.key)
        if scenario.family == "messages":
            return None if self.messages_model is None else messages_request(self.messages_model, scenario.stream,
                                                                             self.key)
        if self.image_model is None:
            return None
        return image_request(self.image_prefix, self.image_model, scenario.stream, scenario.large,
                             self.image_key_header, self.key)


SYSTEM = "You are a concise assistant."
ASK = "Say hello to the benchmark in one sentence."


def chat_request(model: str, stream: bool, key: str) -> Request:
    body: dict = {"model": model, "messages": [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": ASK},
    ]}
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return Request("/v1/chat/completions", orjson.dumps(body),
                   {"Content-Type": "application/json", "Authorization": f"Bearer {key}"})


def messages_request(model: str, stream: bool, key: str) -> Request:
    body: dict = {"model": model, "max_tokens": 256, "system": SYSTEM, "messages": [{"role": "user", "content": ASK}]}
    if stream:
        body["stream"] = True
    return Request("/v1/messages", orjson.dumps(body),
                   {"Content-Type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01"})


def responses_request(model: str, stream: bool, key: str) -> Request:
    body: dict = {"model": model, "instructions": SYSTEM, "input": ASK}
    if stream:
        body["stream"] = True
    return Request("/v1/responses", orjson.dumps(body),
                   {"Content-Type": "application/json", "Authorization": f"Bearer {key}"})


def image_request(prefix: str, model: str, stream: bool, four_k: bool, key_header: str, key: str) -> Request:
    image_config = {"aspectRatio": "16:9", "imageSize": "4K"} if four_k else {"aspectRatio": "1:1", "imageSize": "1K"}
    body = {
        "contents": [{"role": "user", "parts": [{"text": "a lighthouse on a cliff at dawn, oil painting"}]}],
        "generationConfig": {"responseModalities": ["TEXT", "IMAGE"], "imageConfig": image_config},
    }
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    return Request(f"{prefix}/models/{model}:{method}", orjson.dumps(body),
                   {"Content-Type": "application/json", key_header: key})
