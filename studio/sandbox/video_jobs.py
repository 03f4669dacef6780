"""Sandbox video tasks shared by the Ark and DashScope protocol modules.

A task is a database row (``SandboxVideoJob``) and its files live in the media storage, so any
process — web or worker, however many — sees the same task: the sandbox behaves like one vendor
cloud. A real H.264 MP4 (``video.make_video``) is rendered in a small thread pool of the process
that created the task; the render is leased, so if that process dies another one that is asked
about the task takes the render over. The reported phase follows a clock fixed at creation:
queued, then running, then succeeded (or failed) once both the clock and the render are done.
``STUDIO_SANDBOX_VIDEO_SECONDS`` sets the pace (default 4 seconds; 0 in tests). A prompt
containing ``[fail]`` fails the task at the end. The files are served by the sandbox app itself,
like a vendor's temporary result URLs. A task with a ``callback_url`` has it posted to on each
status change by a task on the event loop that created it (``stop_callbacks`` ends them).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import io
import logging
import os
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import httpx
from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import close_old_connections, connection
from PIL import Image

from studio.models.sandbox import SandboxVideoJob
from studio.sandbox import video
from studio.sandbox.app import Request, Response, route

logger = logging.getLogger(__name__)
FAIL_MARKER = "[fail]"
KEEP_SECONDS = 24 * 3600  # results (and their URLs) live 24 hours, like the vendors'
CALLBACK_ATTEMPTS = 4  # the first try plus three retries, as Ark documents
REJECT_MARKER = "[reject]"
FILES_PATH = "/sandbox-files/video"
STORAGE_DIR = "sandbox/video"
PRUNE_EVERY = 300.0
_executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="sandbox-video")
_rendering: set[Future] = set()  # this process's renders queued or under way
_me = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
_last_prune = [0.0]  # throttles this process's clean-up; not state other processes need
CALLBACK_TICK = 0.05  # seconds between looks at a task whose status changes are posted

Record = Callable[[SandboxVideoJob], dict]


def pace() -> float:
    return settings.STUDIO_SANDBOX_VIDEO_SECONDS


def render_lease() -> float:
    """Seconds a render stays claimed without renewal: how soon another process takes over a dead one's."""
    return settings.STUDIO_SANDBOX_RENDER_LEASE


@dataclass
class NewVideoJob:
    """What a protocol module parsed from a create request."""

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
    extra: dict = field(default_factory=dict)
    callback_url: str = ""
    host: str = ""


def fails(job: SandboxVideoJob) -> bool:
    return FAIL_MARKER in job.prompt


def phase(job: SandboxVideoJob, now: float | None = None) -> str:
    """queued → running → succeeded | failed (or cancelled while queued)."""
    if job.cancelled_at is not None:
        return "cancelled"
    elapsed = (now or time.time()) - job.created
    if elapsed < job.pace / 3:
        return "queued"
    done = fails(job) or job.rendered_at is not None or bool(job.render_error)
    if elapsed < job.pace or not done:
        return "running"
    return "failed" if fails(job) or job.render_error else "succeeded"


def started_at(job: SandboxVideoJob) -> float | None:
    return job.created + job.pace / 3 if phase(job) not in ("queued", "cancelled") else None


def finished_at(job: SandboxVideoJob) -> float | None:
    current = phase(job)
    if current == "cancelled":
        return job.cancelled_at
    if current in ("succeeded", "failed"):
        return max(job.created + job.pace, job.rendered_at or job.created)
    return None


def urls(job: SandboxVideoJob, host: str) -> tuple[str, str]:
    base = f"http://{host}{FILES_PATH}/{job.id}"
    return base + ".mp4", (base + "-last.png" if job.want_last_frame else "")


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _save(name: str, data: bytes) -> str:
    return default_storage.save(name, ContentFile(data))


def _create(new: NewVideoJob) -> SandboxVideoJob:
    inputs: dict = {"references": []}
    for role in ("first_frame", "last_frame"):
        image = getattr(new, role)
        if image is not None:
            inputs[role] = _save(f"{STORAGE_DIR}/{new.id}-{role}.png", _png(image))
    for index, image in enumerate(new.references):
        inputs["references"].append(_save(f"{STORAGE_DIR}/{new.id}-ref{index}.png", _png(image)))
    now = time.time()
    job = SandboxVideoJob.objects.create(
        id=new.id, model=new.model, prompt=new.prompt, width=new.width, height=new.height, duration=new.duration,
        seed=new.seed, audio=new.audio, want_last_frame=new.want_last_frame, ratio=new.ratio,
        resolution=new.resolution, request=new.extra, inputs=inputs, callback_url=new.callback_url, host=new.host,
        created=now, pace=pace(), render_owner=_me, render_lease_until=now + render_lease(),
    )
    if now - _last_prune[0] > PRUNE_EVERY:
        _last_prune[0] = now
        _prune(now)
    return job


async def submit(new: NewVideoJob, record: Record | None = None) -> SandboxVideoJob:
    job = await sync_to_async(_create)(new)
    if not fails(job):  # a failing task has nothing to render: it fails when its clock runs out
        _start_render(job.id)
    if job.callback_url.startswith(("http://", "https://")) and record is not None:
        _Notifier.start(job.id, record)
    return job


def _load(job_id: str) -> SandboxVideoJob | None:
    job = SandboxVideoJob.objects.filter(id=job_id).first()
    if job is None:
        return None
    if job.created < time.time() - KEEP_SECONDS:
        return None
    _take_over_render(job)
    return job


async def get(job_id: str) -> SandboxVideoJob | None:
    return await sync_to_async(_load)(job_id)


def _cancel(job_id: str) -> str | None:
    """Cancel a queued task; the phase it was found in (None: unknown)."""
    job = _load(job_id)
    if job is None:
        return None
    found = phase(job)
    if found == "queued":
        now = time.time()
        # Conditional: a task that left the queue meanwhile stays as it is.
        SandboxVideoJob.objects.filter(id=job_id, cancelled_at__isnull=True, created__gt=now - job.pace / 3).update(
            cancelled_at=now)
    return found


async def cancel(job_id: str) -> str | None:
    return await sync_to_async(_cancel)(job_id)


def _take_over_render(job: SandboxVideoJob) -> None:
    """The process that created the task died before its video was made: render it here."""
    now = time.time()
    if job.rendered_at is not None or job.render_error or fails(job) or job.cancelled_at is not None:
        return
    if job.render_lease_until > now:
        return
    taken = SandboxVideoJob.objects.filter(id=job.id, rendered_at__isnull=True, render_lease_until__lte=now).update(
        render_owner=_me, render_lease_until=now + render_lease())
    if taken:
        logger.info("sandbox video %s: taking the render over", job.id)
        _start_render(job.id)


def _open_image(name: str | None) -> Image.Image | None:
    if not name:
        return None
    with default_storage.open(name, "rb") as handle:
        image = Image.open(io.BytesIO(handle.read()))
        image.load()
    return image.convert("RGB")


def _hold_lease(job_id: str, done: threading.Event) -> None:
    """Renew this process's claim on a render while it runs, so only a dead process's render is taken over."""
    while not done.wait(render_lease() / 3):
        try:
            SandboxVideoJob.objects.filter(id=job_id, render_owner=_me, rendered_at__isnull=True).update(
                render_lease_until=time.time() + render_lease())
        except Exception:
            logger.warning("sandbox video %s: renewing the render lease failed", job_id, exc_info=True)
        finally:
            connection.close()


def _start_render(job_id: str) -> None:
    future = _executor.submit(_render, job_id)
    _rendering.add(future)
    future.add_done_callback(_rendering.discard)


async def wait_renders(timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for this process's renders queued or under way (server
    shutdown, the end of a test); whether none is left."""
    pending = [asyncio.wrap_future(f) for f in list(_rendering)]
    if not pending:
        return True
    _, left = await asyncio.wait(pending, timeout=timeout)
    return not left


def _render(job_id: str) -> None:
    close_old_connections()
    done = threading.Event()
    try:
        job = SandboxVideoJob.objects.get(id=job_id)
        if job.render_owner != _me:
            return  # taken over by another process while it waited here
        threading.Thread(target=_hold_lease, args=(job_id, done), name=f"sandbox-lease-{job_id}", daemon=True).start()
        spec = video.VideoSpec(
            prompt=job.prompt, width=job.width, height=job.height, duration=job.duration, fps=24, seed=job.seed,
            first_frame=_open_image(job.inputs.get("first_frame")), last_frame=_open_image(job.inputs.get("last_frame")),
            reference_images=[_open_image(n) for n in job.inputs.get("references", [])], audio=job.audio,
        )
        with tempfile.TemporaryDirectory(prefix="sandbox-video-") as folder:
            path = Path(folder) / f"{job.id}.mp4"
            result = video.make_video(spec, path)
            video_name = _save(f"{STORAGE_DIR}/{job.id}.mp4", path.read_bytes())
        frame_name = ""
        if job.want_last_frame:
            frame_name = _save(f"{STORAGE_DIR}/{job.id}-last.png", video.last_frame_png(result))
        SandboxVideoJob.objects.filter(id=job_id, render_owner=_me).update(
            rendered_at=time.time(), video_name=video_name, last_frame_name=frame_name)
    except Exception as exc:
        logger.exception("sandbox video %s: rendering failed", job_id)
        SandboxVideoJob.objects.filter(id=job_id, render_owner=_me).update(render_error=repr(exc)[:500])
    finally:
        done.set()
        connection.close()


@dataclass(slots=True, eq=False)
class _Notifier:
    """Posts a task's record to its ``callback_url`` on each status change after creation, from
    the event loop of the request that created it, until the task ends or ``stop_callbacks``."""

    job_id: str
    record: Record
    stopped: bool = False
    running: ClassVar[dict[_Notifier, asyncio.Task]] = {}

    @classmethod
    def start(cls, job_id: str, record: Record) -> None:
        notifier = cls(job_id, record)
        task = asyncio.get_running_loop().create_task(notifier.run(), name=f"sandbox-callback-{job_id}")
        cls.running[notifier] = task
        task.add_done_callback(lambda _: cls.running.pop(notifier, None))

    async def run(self) -> None:
        sent = "queued"
        async with httpx.AsyncClient(timeout=5.0) as http:
            while sent not in ("succeeded", "failed", "cancelled"):
                await asyncio.sleep(CALLBACK_TICK)
                if self.stopped:
                    return
                job = await SandboxVideoJob.objects.filter(id=self.job_id).afirst()
                if job is None:
                    return
                current = phase(job)
                if current != sent:
                    sent = current
                    await self._post(http, job, self.record(job))

    async def _post(self, http: httpx.AsyncClient, job: SandboxVideoJob, body: dict) -> None:
        for attempt in range(CALLBACK_ATTEMPTS):
            if self.stopped:
                return
            try:
                if (await http.post(job.callback_url, json=body)).status_code < 300:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(min(2.0**attempt, 5.0) * min(1.0, job.pace or CALLBACK_TICK))
        logger.info("sandbox callback for %s was not acknowledged", job.id)


def callback_senders() -> int:
    """How many tasks of this process are posting callbacks."""
    return len(_Notifier.running)


async def stop_callbacks() -> None:
    """Stop posting callbacks and wait until no sender is left between two looks at the database
    (server shutdown, the end of a test): none outlives the event loop that started it."""
    loop = asyncio.get_running_loop()
    running = dict(_Notifier.running)
    for notifier, task in running.items():
        notifier.stopped = True
        if task.get_loop() is not loop:  # its loop has gone, and the task with it
            _Notifier.running.pop(notifier, None)
    await asyncio.gather(*(t for t in running.values() if t.get_loop() is loop), return_exceptions=True)


def _prune(now: float) -> None:
    for job in SandboxVideoJob.objects.filter(created__lt=now - KEEP_SECONDS).only("id", "inputs", "video_name",
                                                                                   "last_frame_name"):
        names = [job.video_name, job.last_frame_name, job.inputs.get("first_frame"), job.inputs.get("last_frame"),
                 *job.inputs.get("references", [])]
        for name in filter(None, names):
            default_storage.delete(name)
        job.delete()


def new_id(prefix: str = "") -> str:
    return prefix + uuid.uuid4().hex[:20]


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


def _read_result(name: str, ext: str) -> bytes | None:
    job = SandboxVideoJob.objects.filter(id=name if ext == "mp4" else name.removesuffix("-last")).first()
    if job is None or job.created < time.time() - KEEP_SECONDS:
        return None
    stored = job.video_name if ext == "mp4" else job.last_frame_name
    if not stored:
        return None
    with default_storage.open(stored, "rb") as handle:
        return handle.read()


@route("GET", FILES_PATH + r"/(?P<name>[0-9a-zA-Z_-]+)\.(?P<ext>mp4|png)")
async def serve_file(request: Request) -> Response:
    name, ext = request.params["name"], request.params["ext"]
    data = await sync_to_async(_read_result)(name, ext)
    if data is None:
        return Response(status=404, body=b"not found", content_type="text/plain")
    return Response(body=data, content_type="video/mp4" if ext == "mp4" else "image/png")
