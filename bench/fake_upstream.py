"""A fake vendor fast enough not to be the bottleneck: OpenAI chat and responses, Anthropic
messages and Gemini image generation.

A bare asyncio protocol with httptools' parser on uvloop: no framework, responses prepared at
start-up, so one core serves far more requests per second than any relay in front of it.

Routes (matched on the path's tail, so a base URL with or without ``/v1`` works):

- ``POST .../chat/completions``: OpenAI chat, buffered or ``stream: true`` (SSE ``data:`` chunks,
  a usage chunk with ``stream_options.include_usage``, ``data: [DONE]``); needs ``Authorization: Bearer``.
- ``POST .../responses``: OpenAI responses, buffered or ``stream: true`` (named events, each with
  its ``sequence_number``, ending with ``response.completed``); needs ``Authorization: Bearer``.
- ``POST .../messages``: Anthropic messages, buffered or ``stream: true`` (``message_start`` …
  ``message_stop``); needs ``x-api-key`` (or ``Authorization: Bearer``, as newer SDKs send the
  key) and ``anthropic-version``.
- ``POST .../models/{model}:generateContent`` and ``:streamGenerateContent?alt=sse``: Gemini, a
  ~1.5 MB image, or the ~15 MB 4K frame when ``generationConfig.imageConfig.imageSize`` is "4K";
  needs ``x-goog-api-key`` (or ``?key=``).
- ``GET /health``: readiness.

Run: ``python -m bench.fake_upstream --port 9100``.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

import httptools
import orjson

from bench.payloads import RESPONSE_ID, Payloads

GEMINI_PATH = re.compile(r"/models/([^/:]+):(generateContent|streamGenerateContent)$")
REASONS = {200: b"OK", 400: b"Bad Request", 401: b"Unauthorized", 403: b"Forbidden", 404: b"Not Found",
           405: b"Method Not Allowed"}


class Reply:
    """A status, a content type and either one body or a list of chunks (sent chunked)."""

    __slots__ = ("status", "content_type", "body", "chunks")

    def __init__(self, status: int, content_type: bytes, body: bytes = b"", chunks: list[bytes] | None = None):
        self.status = status
        self.content_type = content_type
        self.body = body
        self.chunks = chunks


def json_reply(status: int, body: object) -> Reply:
    return Reply(status, b"application/json", orjson.dumps(body))


def openai_error(status: int, message: str, code: str, param: str | None = None) -> Reply:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return json_reply(status, {"error": {"message": message, "type": kind, "param": param, "code": code}})


def anthropic_error(status: int, message: str, kind: str) -> Reply:
    return json_reply(status, {"type": "error", "error": {"type": kind, "message": message}})


def gemini_error(status: int, message: str, vendor_status: str) -> Reply:
    return json_reply(status, {"error": {"code": status, "message": message, "status": vendor_status}})


class FakeVendor:
    """Turns one parsed request into a ``Reply``; knows the vendors, not the sockets."""

    def __init__(self, payloads: Payloads, *, stream_chunks: int = 20) -> None:
        self.payloads = payloads
        self.stream_chunks = stream_chunks
        self.requests = 0
        self.responses_made = 0

    def handle(self, method: bytes, target: bytes, headers: dict[bytes, bytes], body: bytes) -> Reply:
        self.requests += 1
        url = urlsplit(target.decode("latin-1"))
        path = url.path
        if path == "/health":
            return Reply(200, b"text/plain", b"ok")
        if path.endswith("/chat/completions"):
            if method != b"POST":
                return openai_error(405, "use POST", "method_not_allowed")
            return self.chat(headers, body)
        if path.endswith("/responses"):
            if method != b"POST":
                return openai_error(405, "use POST", "method_not_allowed")
            return self.responses(headers, body)
        if path.endswith("/messages"):
            if method != b"POST":
                return anthropic_error(405, "use POST", "invalid_request_error")
            return self.messages(headers, body)
        match = GEMINI_PATH.search(path)
        if match:
            if method != b"POST":
                return gemini_error(405, "use POST", "INVALID_ARGUMENT")
            query = parse_qs(url.query)
            return self.gemini(match.group(1), match.group(2) == "streamGenerateContent", query, headers, body)
        return json_reply(404, {"error": {"message": f"no route for {path}", "code": 404}})

    def chat(self, headers: dict[bytes, bytes], body: bytes) -> Reply:
        if not headers.get(b"authorization", b"").lower().startswith(b"bearer "):
            return openai_error(401, "You didn't provide an API key.", "invalid_api_key")
        request = parse_object(body)
        if request is None or not isinstance(request.get("messages"), list):
            return openai_error(400, "'messages' is a required property", "invalid_request_error", "messages")
        model = str(request.get("model") or "")
        if not model:
            return openai_error(400, "you must provide a model parameter", "invalid_request_error", "model")
        if request.get("stream"):
            options = request.get("stream_options") or {}
            include_usage = bool(isinstance(options, dict) and options.get("include_usage"))
            return Reply(200, b"text/event-stream",
                         chunks=self.payloads.chat_chunks(model, include_usage, self.stream_chunks))
        return Reply(200, b"application/json", self.payloads.chat_completion(model))

    def responses(self, headers: dict[bytes, bytes], body: bytes) -> Reply:
        if not headers.get(b"authorization", b"").lower().startswith(b"bearer "):
            return openai_error(401, "You didn't provide an API key.", "invalid_api_key")
        request = parse_object(body)
        if request is None or "input" not in request:
            return openai_error(400, "Missing required parameter: 'input'.", "missing_required_parameter", "input")
        model = str(request.get("model") or "")
        if not model:
            return openai_error(400, "Missing required parameter: 'model'.", "missing_required_parameter", "model")
        # Each response has an id of its own, as the vendor's: a relay that keeps responses by id
        # writes a new one each time.
        self.responses_made += 1
        rid = b"resp_%09d" % self.responses_made
        if request.get("stream"):
            events = self.payloads.response_events(model, self.stream_chunks)
            return Reply(200, b"text/event-stream", chunks=[e.replace(RESPONSE_ID, rid) for e in events])
        return Reply(200, b"application/json", self.payloads.response(model).replace(RESPONSE_ID, rid))

    def messages(self, headers: dict[bytes, bytes], body: bytes) -> Reply:
        if not headers.get(b"x-api-key") and not headers.get(b"authorization", b"").lower().startswith(b"bearer "):
            return anthropic_error(401, "x-api-key header is required", "authentication_error")
        if not headers.get(b"anthropic-version"):
            return anthropic_error(400, "anthropic-version: header is required", "invalid_request_error")
        request = parse_object(body)
        if request is None or not isinstance(request.get("messages"), list) or not request.get("model"):
            return anthropic_error(400, "model: Field required; messages: Field required", "invalid_request_error")
        if not isinstance(request.get("max_tokens"), int):
            return anthropic_error(400, "max_tokens: Field required", "invalid_request_error")
        model = str(request["model"])
        if request.get("stream"):
            return Reply(200, b"text/event-stream", chunks=self.payloads.message_events(model, self.stream_chunks))
        return Reply(200, b"application/json", self.payloads.message(model))

    def gemini(self, model: str, stream: bool, query: dict, headers: dict[bytes, bytes], body: bytes) -> Reply:
        if not headers.get(b"x-goog-api-key") and not query.get("key"):
            return gemini_error(403, "Method doesn't allow unregistered callers. Please use an API key.",
                                "PERMISSION_DENIED")
        request = parse_object(body)
        if request is None or not isinstance(request.get("contents"), list):
            return gemini_error(400, "Invalid JSON payload: 'contents' is required.", "INVALID_ARGUMENT")
        config = request.get("generationConfig") or {}
        image_config = config.get("imageConfig") if isinstance(config, dict) else None
        four_k = isinstance(image_config, dict) and image_config.get("imageSize") == "4K"
        if stream:
            if query.get("alt") != ["sse"]:
                # Without alt=sse the real API answers one JSON array; the gateway always asks for SSE.
                return gemini_error(400, "this fake only streams with alt=sse", "INVALID_ARGUMENT")
            return Reply(200, b"text/event-stream", chunks=self.payloads.gemini_stream(model, four_k))
        return Reply(200, b"application/json", self.payloads.gemini_response(model, four_k))


def parse_object(body: bytes) -> dict | None:
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


class HttpConnection(asyncio.Protocol):
    """HTTP/1.1 keep-alive over one socket; httptools calls the ``on_*`` methods."""

    def __init__(self, vendor: FakeVendor) -> None:
        self.vendor = vendor
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self.target = b""
        self.headers: dict[bytes, bytes] = {}
        self.body: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self.write(json_reply(400, {"error": {"message": "malformed HTTP request"}}), keep_alive=False)

    def on_message_begin(self) -> None:
        self.target = b""
        self.headers = {}
        self.body = []

    def on_url(self, url: bytes) -> None:
        self.target += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers[name.lower()] = value

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        reply = self.vendor.handle(self.parser.get_method(), self.target, self.headers, b"".join(self.body))
        self.write(reply, keep_alive=self.parser.should_keep_alive())

    def write(self, reply: Reply, *, keep_alive: bool) -> None:
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        head = [b"HTTP/1.1 %d %s\r\n" % (reply.status, REASONS.get(reply.status, b"Error")),
                b"content-type: " + reply.content_type + b"\r\n",
                b"connection: keep-alive\r\n" if keep_alive else b"connection: close\r\n"]
        if reply.chunks is None:
            head.append(b"content-length: %d\r\n\r\n" % len(reply.body))
            transport.writelines([*head, reply.body])
        else:
            head.append(b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n")
            transport.writelines(head)
            # One write per event, as a vendor flushes each event when it is ready.
            for chunk in reply.chunks:
                transport.writelines([b"%x\r\n" % len(chunk), chunk, b"\r\n"])
            transport.write(b"0\r\n\r\n")
        if not keep_alive:
            transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None


async def serve(host: str, port: int, vendor: FakeVendor) -> asyncio.base_events.Server:
    loop = asyncio.get_running_loop()
    factory: Callable[[], HttpConnection] = lambda: HttpConnection(vendor)  # noqa: E731
    return await loop.create_server(factory, host, port, backlog=2048, reuse_address=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake OpenAI, Anthropic and Gemini-image upstream for benchmarks.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9100)
    parser.add_argument("--stream-chunks", type=int, default=20, help="text deltas per streamed answer")
    parser.add_argument("--small", action="store_true", help="tiny images (for tests of the harness itself)")
    args = parser.parse_args(argv)
    if not args.host.startswith("127.") and args.host not in ("localhost", "::1"):
        parser.error("the fake upstream binds to loopback only")
    try:
        import uvloop

        uvloop.install()
    except ImportError:  # plain asyncio still works, only slower
        pass

    async def run() -> None:
        payloads = Payloads(small=args.small)
        server = await serve(args.host, args.port, FakeVendor(payloads, stream_chunks=args.stream_chunks))
        print(f"fake upstream on http://{args.host}:{args.port} (payloads built in {payloads.build_seconds:.1f}s: "
              f"1K image {len(payloads.image_1k_b64) / 1e6:.2f} MB, 4K frame {len(payloads.image_4k_b64) / 1e6:.2f} MB "
              "base64)", flush=True)
        async with server:
            await server.serve_forever()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
