"""The folder a mode's servers work in, and what creating a file costs there.

Every mode starts its servers in a new folder: their logs, the request bodies, and the gateway's
media, where it stores each picture it relays. Creating those files is part of the gateway's CPU
per image call and not of the raw relay's, which writes none. That cost depends on the file
system far more than on the gateway: on a freshly made ext4 disk (a new virtual machine) creating
a file in a new folder under ``/tmp`` took 226-294 µs of CPU, and 8-43 µs under other folders of
the same machine, a large share of the recorder's work per picture. So the parent folder is a
choice (``--workdir``, by default the system's temporary folder), and each result reports it with
what creating a file in a new folder there cost just before the servers started.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

PROBE_FILES = 200  # files the probe creates


def make_workdir(prefix: str, parent: Path | None) -> Path:
    """A new folder for a run, in ``parent`` (made when missing) or the system's temporary folder."""
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=parent))


def create_cost(folder: Path, files: int = PROBE_FILES) -> float:
    """CPU µs (this thread's, user and system) to create one empty file in a new folder inside
    ``folder``, as the gateway creates a picture's file; the probe's files are removed again."""
    probe = Path(tempfile.mkdtemp(prefix="file-create-probe-", dir=folder))
    names = [str(probe / f"{i:05d}") for i in range(files)]
    try:
        started = time.thread_time_ns()
        for name in names:
            os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        spent = time.thread_time_ns() - started
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    return spent / files / 1000


def describe_workdir(workdir: Path) -> dict:
    """What a result reports of its folder: where it was, and the probe's cost there."""
    return {"parent": str(workdir.parent), "file_create_cpu_us": round(create_cost(workdir), 1)}


def workdir_line(found: dict | None) -> str:
    """The folder as the printed results name it."""
    if not found:
        return "working folder: not reported"
    return (f"working folder: {found['parent']} (creating a file in a new folder there: "
            f"{found['file_create_cpu_us']:.0f} µs of CPU)")
