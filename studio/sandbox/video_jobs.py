"""Sandbox video tasks shared by the Ark and DashScope protocol modules.

A task renders a real H.264 MP4 (``video.make_video``) in a small thread pool as soon as it is
created, while its reported status follows a clock: queued, then running, then succeeded (or
failed) once both the clock and the render are done. ``STUDIO_SANDBOX_VIDEO_SECONDS`` sets the
pace (default 4 seconds; 0 in tests). A prompt containing ``[fail]`` fails the task at the end.
The files are served by the sandbox app itself, like a vendor's temporary result URLs.
"""

from __future__ import annotations

import base64
import binascii
import io
import logging
import os
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from PIL import Image

from . import video
from .app import Request, Response, route

logger = logging.getLogger(__name__)
FAIL_MARKER = "[fail]"
KEEP_SECONDS = 24 * 3600  # results (and their URLs) live 24 hours, like the vendors'
CALLBACK_ATTEMPTS = 4  # the first try plus three retries, as Ark documents
REJECT_MARKER = "[reject]"
FILES_PATH = "/sandbox-files/video"
_executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="sandbox-video")
_jobs: dict[str, SandboxVideoJob] = {}


def pace() -> float:
    return float(os.environ.get("STUDIO_SANDBOX_VIDEO_SECONDS", "4"))


def files_dir() -> Path:
    path = Path(os.environ.get("STUDIO_SANDBOX_VIDEO_DIR") or Path(tempfile.gettempdir()) / "studio-sandbox-video")
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass
class SandboxVideoJob:
    id: str
    model: str
    prompt: str
    width: int
    height: int
    duration: float
    seed: int
    audio: bool
    want_last_frame: bool
    ratio: str
    resolution: str
    first_frame: Image.Image | None = None
    last_frame: Image.Image | None = None
    references: list[Image.Image] = field(default_factory=list)
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    cancelled: bool = False
    future: Future | None = None
    extra: dict = field(default_factory=dict)
    # Ark-style status callbacks: where to post, and how to render the record at that moment.
    callback_url: str = ""
    record: Callable[[SandboxVideoJob], dict] | None = None

    @property
    def fails(self) -> bool:
        return FAIL_MARKER in self.prompt

    def phase(self) -> str:
        """queued → running → succeeded | failed (or cancelled while queued)."""
        if self.cancelled:
            return "cancelled"
        elapsed = time.time() - self.created
        step = pace()
        if elapsed < step / 3:
            return "queued"
        if self.started is None:
            self.started = time.time()
        if elapsed < step or self.future is None or not self.future.done():
            return "running"
        if self.finished is None:
            self.finished = time.time()
        if self.fails or self.future.exception() is not None:
            return "failed"
        return "succeeded"

    def video_path(self) -> Path:
        return files_dir() / f"{self.id}.mp4"

    def last_frame_path(self) -> Path:
        return files_dir() / f"{self.id}-last.png"

    def urls(self, host: str) -> tuple[str, str]:
        base = f"http://{host}{FILES_PATH}/{self.id}"
        return base + ".mp4", (base + "-last.png" if self.want_last_frame else "")


def submit(job: SandboxVideoJob) -> None:
    _prune()
    _jobs[job.id] = job
    if not job.fails:
        job.future = _executor.submit(_render, job)
    else:
        done: Future = Future()
        done.set_result(None)
        job.future = done
    if job.callback_url.startswith(("http://", "https://")) and job.record is not None:
        threading.Thread(target=_notify, args=(job,), name=f"sandbox-callback-{job.id}", daemon=True).start()


def _notify(job: SandboxVideoJob) -> None:
    """Post the task record to ``callback_url`` on each status change after creation."""
    sent = "queued"
    while sent not in ("succeeded", "failed", "cancelled"):
        time.sleep(0.05)
        phase = job.phase()
        if phase == sent:
            continue
        sent = phase
        body = job.record(job) if job.record else {}
        for attempt in range(CALLBACK_ATTEMPTS):
            try:
                if httpx.post(job.callback_url, json=body, timeout=5.0).status_code < 300:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(min(2.0**attempt, 5.0) * min(1.0, pace() or 0.05))
        else:
            logger.info("sandbox callback for %s was not acknowledged", job.id)


def _prune() -> None:
    cutoff = time.time() - KEEP_SECONDS
    for job_id in [j.id for j in _jobs.values() if j.created < cutoff]:
        job = _jobs.pop(job_id)
        for path in (job.video_path(), job.last_frame_path()):
            path.unlink(missing_ok=True)


def get(job_id: str) -> SandboxVideoJob | None:
    return _jobs.get(job_id)


def new_id(prefix: str = "") -> str:
    return prefix + uuid.uuid4().hex[:20]


def _render(job: SandboxVideoJob) -> None:
    spec = video.VideoSpec(
        prompt=job.prompt, width=job.width, height=job.height, duration=job.duration, fps=24,
        seed=job.seed, first_frame=job.first_frame, last_frame=job.last_frame,
        reference_images=job.references, audio=job.audio,
    )
    result = video.make_video(spec, job.video_path())
    if job.want_last_frame:
        job.last_frame_path().write_bytes(video.last_frame_png(result))


def decode_image(url: str) -> Image.Image | None:
    """Images given as data URIs are used; other URLs are not fetched (the sandbox is offline)."""
    if not isinstance(url, str) or not url.startswith("data:") or "," not in url:
        return None
    try:
        raw = base64.b64decode(url.split(",", 1)[1], validate=False)
        image = Image.open(io.BytesIO(raw))
        image.load()
        return image.convert("RGB")
    except (binascii.Error, OSError, ValueError):
        return None


def size_for(resolution: str, ratio: str, first_frame: Image.Image | None) -> tuple[int, int]:
    try:
        return video.resolution_size(resolution, ratio, first_frame)
    except ValueError:
        return video.resolution_size("720p", "16:9")


@route("GET", FILES_PATH + r"/(?P<name>[0-9a-zA-Z_-]+)\.(?P<ext>mp4|png)")
async def serve_file(request: Request) -> Response:
    name, ext = request.params["name"], request.params["ext"]
    path = files_dir() / f"{name}.{ext}"
    if not path.is_file():
        return Response(status=404, body=b"not found", content_type="text/plain")
    return Response(body=path.read_bytes(), content_type="video/mp4" if ext == "mp4" else "image/png")
