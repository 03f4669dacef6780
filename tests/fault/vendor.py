"""A faulty vendor at the HTTP boundary: a real loopback server whose ``mode`` says how it fails.

Modes: ``ok`` (``reply`` answers), ``500``, ``429`` (with ``retry-after``), ``hang`` (no byte
for 5 s), ``die`` (two chat stream chunks, then the connection is cut), ``cut`` (a 200 whose
body stops half-way, then the connection is cut), ``malformed`` (a 200 whose body is not JSON).
``refuse`` is a closed port (see ``closed_port``). A reply of ``Events`` is sent as a stream of
server-sent events.
"""

from __future__ import annotations

import socket
import socketserver
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import orjson

COMPLETION = {"id": "c1", "object": "chat.completion", "created": 1, "model": "vendor-model",
              "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
              "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}

Reply = Callable[[str, str, dict], tuple[int, object]]


@dataclass
class Events:
    """A reply sent as server-sent events: (event name or None, data: JSON, or bytes as they are)."""

    events: list[tuple[str | None, object]]

    def body(self) -> bytes:
        frames = []
        for name, data in self.events:
            line = data if isinstance(data, bytes) else orjson.dumps(data)
            frames.append((b"event: %s\n" % name.encode() if name else b"") + b"data: " + line + b"\n\n")
        return b"".join(frames)


def chat_reply(method: str, path: str, body: dict) -> tuple[int, object]:
    return 200, COMPLETION


def _response(status: int, reason: str, payload: bytes, extra: bytes = b"") -> bytes:
    return (b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n%sconnection: close\r\n\r\n%s"
            % (status, reason.encode(), len(payload), extra, payload))


class FaultyVendor:
    """A loopback vendor; ``requests`` lists ``"METHOD /path"`` of every request it read."""

    def __init__(self, reply: Reply = chat_reply) -> None:
        self.mode = "ok"
        self.reply = reply
        self.requests: list[str] = []
        vendor = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = self.request.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                lines = head.split(b"\r\n")
                length = next((int(line.split(b":")[1]) for line in lines
                               if line.lower().startswith(b"content-length:")), 0)
                while len(body) < length:
                    body += self.request.recv(65536)
                method, target = lines[0].decode().split(" ")[:2]
                vendor.requests.append(f"{method} {target}")
                try:
                    parsed = orjson.loads(body) if body else {}
                except orjson.JSONDecodeError:  # multipart (image edits): not read here
                    parsed = {}
                vendor.answer(self.request, method, target.split("?")[0], parsed)

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, sock: socket.socket, method: str, path: str, request: dict) -> None:
        if self.mode == "hang":
            time.sleep(5)
            return
        if self.mode == "500":
            payload = orjson.dumps({"error": {"message": "boom", "type": "server_error", "code": None}})
            sock.sendall(_response(500, "Internal Server Error", payload))
            return
        if self.mode == "429":
            payload = orjson.dumps({"error": {"message": "slow down", "type": "rate_limit_error", "code": "429"}})
            sock.sendall(_response(429, "Too Many Requests", payload, b"retry-after: 1\r\n"))
            return
        if self.mode == "malformed":
            sock.sendall(_response(200, "OK", b"{\"id\": \"x\", <html>oops"))
            return
        if self.mode == "cut":
            payload = orjson.dumps(self.reply(method, path, request)[1])
            sock.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                         % (len(payload) + 100, payload[: len(payload) // 2]))
            sock.shutdown(socket.SHUT_RDWR)
            return
        if self.mode == "die":
            sock.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
            for word in ("hel", "lo"):
                event = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                         "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}]}
                frame = b"data: " + orjson.dumps(event) + b"\n\n"
                sock.sendall(b"%x\r\n%s\r\n" % (len(frame), frame))
            sock.shutdown(socket.SHUT_RDWR)
            return
        status, reply = self.reply(method, path, request)
        if isinstance(reply, Events):
            payload = reply.body()
            sock.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\n"
                         b"connection: close\r\n\r\n%s" % (len(payload), payload))
            return
        sock.sendall(_response(status, "OK" if status == 200 else "Error", orjson.dumps(reply)))

    def url(self, suffix: str = "/v1") -> str:
        return f"http://127.0.0.1:{self.port}{suffix}"

    @property
    def base_url(self) -> str:
        return self.url()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
