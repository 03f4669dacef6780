"""Stand-ins for DNS and the address policy, for tests of URL checking and pinned fetching."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import Any


def fake_resolver(mapping: dict[str, list[str]], calls: list[str]) -> Callable[..., Any]:
    """A stand-in for ``loop.getaddrinfo`` answering from ``mapping`` (lists are consumed in turn)."""

    async def getaddrinfo(host: str, port: int, **kw: Any) -> list[tuple[Any, ...]]:
        calls.append(host)
        answers = mapping[host]
        address = answers.pop(0) if len(answers) > 1 else answers[0]
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port))]

    return getaddrinfo


def only_public(*addresses: str) -> Callable[[Any], bool]:
    allowed = {ipaddress.ip_address(a) for a in addresses}
    return lambda ip: ip in allowed
