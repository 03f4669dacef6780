"""The media storage writes each file through to the disk and out of the page cache."""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import mmap
import os
import sys

import pytest
from django.core.files.base import ContentFile

from studio.core.file_storage import MediaFileStorage

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="page-cache residency is read with Linux's mincore")

PAGE = mmap.PAGESIZE


def resident_pages(path: str) -> int:
    """How many of the file's pages are in the page cache now (``mincore`` over a mapping of it)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    size = os.path.getsize(path)
    pages = (size + PAGE - 1) // PAGE
    fd = os.open(path, os.O_RDONLY)
    try:
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        assert address not in (None, ctypes.c_void_p(-1).value), os.strerror(ctypes.get_errno())
        try:
            flags = (ctypes.c_ubyte * pages)()
            assert libc.mincore(address, size, flags) == 0, os.strerror(ctypes.get_errno())
            return sum(flag & 1 for flag in flags)
        finally:
            libc.munmap(address, size)
    finally:
        os.close(fd)


def picture_bytes(size: int = 2 * 1024 * 1024) -> bytes:
    return os.urandom(size)


def test_a_saved_file_is_whole_on_disk_and_out_of_the_cache(tmp_path):
    storage = MediaFileStorage(location=str(tmp_path), write_through=True)
    data = picture_bytes()
    name = storage.save("assets/picture.png", ContentFile(data))
    assert resident_pages(storage.path(name)) == 0  # clean once synced, so dropped at once
    with storage.open(name) as saved:
        assert saved.read() == data  # read back from the disk, every byte


def test_without_write_through_the_kernel_keeps_the_written_pages(tmp_path):
    storage = MediaFileStorage(location=str(tmp_path), write_through=False)
    data = picture_bytes()
    name = storage.save("assets/picture.png", ContentFile(data))
    assert resident_pages(storage.path(name)) == len(data) // PAGE  # dirty pages stay until written back


def test_the_setting_decides_by_default(tmp_path, settings):
    settings.STUDIO_MEDIA_WRITE_THROUGH = False
    assert MediaFileStorage(location=str(tmp_path)).write_through is False
    settings.STUDIO_MEDIA_WRITE_THROUGH = True
    assert MediaFileStorage(location=str(tmp_path)).write_through is True


def test_a_name_taken_gets_a_new_one_and_both_files_stay(tmp_path):
    storage = MediaFileStorage(location=str(tmp_path), write_through=True)
    first = storage.save("a.png", ContentFile(b"one"))
    second = storage.save("a.png", ContentFile(b"two"))
    assert first != second
    assert storage.open(first).read() == b"one" and storage.open(second).read() == b"two"


def test_without_fdatasync_the_file_is_synced_with_fsync(tmp_path, monkeypatch):
    synced = []
    fsync = os.fsync
    monkeypatch.delattr(os, "fdatasync")  # as on macOS
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), fsync(fd)))
    storage = MediaFileStorage(location=str(tmp_path), write_through=True)
    data = picture_bytes()
    name = storage.save("assets/picture.png", ContentFile(data))
    assert len(synced) == 1 and resident_pages(storage.path(name)) == 0
    assert storage.open(name).read() == data


def test_a_file_system_that_cannot_sync_keeps_the_file_as_written(tmp_path, monkeypatch):
    def cannot(fd: int) -> None:
        raise OSError(errno.EINVAL, "Invalid argument")

    monkeypatch.setattr(os, "fdatasync", cannot)
    storage = MediaFileStorage(location=str(tmp_path), write_through=True)
    name = storage.save("a.png", ContentFile(b"picture"))
    assert storage.open(name).read() == b"picture"


def test_an_input_output_error_while_syncing_fails_the_save(tmp_path, monkeypatch):
    def broken(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fdatasync", broken)
    storage = MediaFileStorage(location=str(tmp_path), write_through=True)
    with pytest.raises(OSError):
        storage.save("a.png", ContentFile(b"picture"))
