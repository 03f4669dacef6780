"""Shared by the protocol A and B rule tests: catalog capabilities, a refusal check, a real clip."""

from __future__ import annotations

import base64
import io

import av
import numpy as np
import pytest

from studio.catalog_data import DEMO_MODELS
from studio.core.errors import BadRequest

CAPS = {m["model_id"]: m["capabilities"] for m in DEMO_MODELS}
TEXT = [{"type": "text", "text": "a fox"}]
IMG = "https://example.com/a.png"


def rejects(param: str, call, *args, **kwargs) -> BadRequest:
    with pytest.raises(BadRequest) as info:
        call(*args, **kwargs)
    assert info.value.param == param, (info.value.param, info.value.message)
    assert param in info.value.message
    return info.value


def clip_data_uri(seconds: float) -> str:
    buffer = io.BytesIO()
    with av.open(buffer, "w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=24)
        stream.width, stream.height, stream.pix_fmt = 64, 64, "yuv420p"
        for _ in range(round(seconds * 24)):
            frame = av.VideoFrame.from_ndarray(np.zeros((64, 64, 3), np.uint8), format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return "data:video/mp4;base64," + base64.b64encode(buffer.getvalue()).decode()
