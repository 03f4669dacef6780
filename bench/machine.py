"""What a result was measured on: Python, the platform, the CPUs, and the versions of the
libraries both the gateway and the raw relay serve and call upstream through (uvicorn with
httptools and uvloop in front, aiohttp behind). Their per-request costs are a large share of both
sides of a ratio, and they change between releases: aiohttp 3.14, for one, made every HTTP chunk
an upstream streams cost a parser feed more in the raw relay (the gateway's transport skips it),
so a ratio is read with the versions it was measured with."""

from __future__ import annotations

import os
import platform
from importlib import metadata

LIBRARIES = ("uvicorn", "httptools", "uvloop", "aiohttp", "httpx")


def version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def machine() -> dict:
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "libraries": {name: version(name) for name in LIBRARIES}}
