"""Helpers for the translation tests: a context and a way to run a stream translation."""

from __future__ import annotations

import asyncio
from typing import Any

from studio.gateway.text.translation import Context


def ctx(stream: bool = False, include_usage: bool = False, request: dict | None = None) -> Context:
    return Context(model="platform-model", upstream_model="vendor-model", stream=stream,
                   include_usage=include_usage, request=request or {})


def run_stream(translator, events: list[tuple[str | None, dict[str, Any]]], context: Context) -> list:
    async def source():
        for event in events:
            yield event

    async def collect():
        return [event async for event in translator.stream(source(), context)]

    return asyncio.run(collect())
