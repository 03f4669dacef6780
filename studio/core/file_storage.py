"""The local media storage: Django's file system storage, writing each file through to the disk.

Once a file's bytes are written, the storage waits for them to reach the disk (``fdatasync``)
and then lets the kernel drop its pages from the cache (``posix_fadvise(POSIX_FADV_DONTNEED)``;
they are clean by then, so they go at once):

- **Durable before recorded.** A picture's row is written after its file; without the sync, a
  machine that loses power in the next half minute (the kernel's usual write-back delay) keeps
  the row and loses the bytes it points to, or keeps them truncated.
- **Write-once files do not crowd the cache.** The gateway writes every picture and video it
  relays, gigabytes an hour on a busy day, and seldom reads one back soon (the client has it, the
  studio shows thumbnails). Kept cached, they push out the pages that are read (the database's,
  static files), and every page written needs a fresh page of memory. On a virtual machine whose
  memory the host backs lazily (Firecracker, for one) a fresh page costs a fault in the host:
  writing a new 1 MB file there costs about 3 ms of system time once the cache has grown,
  against about 0.4 ms when the pages of the files before it are freed and used again.

The wait is spent in the thread that stores the file (the recorder's, off the response path) and
holds no lock of the interpreter's. A file system that cannot sync or drop a file (some network
and user-space ones answer ``EINVAL``) keeps it as it was written. ``STUDIO_MEDIA_WRITE_THROUGH=0``
leaves written files to the kernel's write-back and cache.
"""

from __future__ import annotations

import errno
import os
from typing import Any

from django.conf import settings
from django.core.files.storage import FileSystemStorage

CAN_DROP = hasattr(os, "posix_fadvise")
UNSUPPORTED = {errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP}


def write_through(path: str) -> None:
    """Wait for ``path``'s written bytes to reach the disk, then drop its pages from the cache."""
    fd = os.open(path, os.O_RDONLY)
    try:
        # fdatasync skips the file's times; where there is none (macOS), fsync does the same job.
        (os.fdatasync if hasattr(os, "fdatasync") else os.fsync)(fd)
        if CAN_DROP:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    except OSError as exc:
        if exc.errno not in UNSUPPORTED:  # an I/O error: the bytes may not be on the disk
            raise
    finally:
        os.close(fd)


class MediaFileStorage(FileSystemStorage):
    """``FileSystemStorage`` whose saved files are on the disk, and out of the cache, when
    ``save`` returns (see the module's text)."""

    def __init__(self, *args: Any, write_through: bool | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.write_through = settings.STUDIO_MEDIA_WRITE_THROUGH if write_through is None else write_through

    def _save(self, name: str, content: Any) -> str:
        name = super()._save(name, content)
        if self.write_through:
            write_through(self.path(name))
        return name
