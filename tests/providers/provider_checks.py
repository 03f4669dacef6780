"""A vendor faked at the HTTP boundary for the provider-class tests: it records each request and
answers with a fixed status and body; ``bound`` makes a registered provider for an upstream
entry pointing at it."""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx

from studio.core.entries import UpstreamEntry
from studio.providers import http
from studio.providers.base import Provider
from studio.providers.registry import vendor


@dataclass
class RecordingVendor:
    host: str
    status: int = 200
    body: bytes = b"{}"
    requests: list[dict] = field(default_factory=list)

    async def __call__(self, scope, receive, send) -> None:
        await receive()
        self.requests.append({"method": scope["method"], "path": scope["path"],
                              "query": scope["query_string"].decode(),
                              "headers": {k.decode(): v.decode() for k, v in scope["headers"]}})
        await send({"type": "http.response.start", "status": self.status,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": self.body})

    def __enter__(self) -> RecordingVendor:
        http.mount(self.host, httpx.ASGITransport(app=self))
        return self

    def __exit__(self, *exc) -> None:
        http.unmount(self.host)


def bound(protocol: str, base_url: str, credential: str = "vendor-credential") -> Provider:
    entry = UpstreamEntry(id=1, name=f"{protocol} test", protocol=protocol, base_url=base_url,
                          credential=credential, priority=0, weight=1, timeout=None, model_map={})
    return vendor(protocol).provider(entry)
