"""The media storage writes each file through to the disk (its whole blocks directly) and out of the page cache."""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import mmap
import os
import sys

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import TemporaryUploadedFile

from studio.core import file_storage
from studio.core.file_storage import BLOCK, BUFFER, MediaFileStorage

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
    if not size:
        return 0
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


class Pieces(ContentFile):
    """Bytes a storage reads in pieces of the given sizes, in turn (as a decoded picture comes)."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        super().__init__(data)
        self.data, self.sizes = data, sizes

    def chunks(self, chunk_size=None):
        start, turn = 0, 0
        while start < len(self.data):
            size = self.sizes[turn % len(self.sizes)]
            yield self.data[start:start + size]
            start, turn = start + size, turn + 1


@pytest.mark.parametrize("size", [0, 1, BLOCK - 1, BLOCK, BLOCK + 1, BUFFER - 1, BUFFER, BUFFER + 1, 2 * BUFFER + 12345])
def test_files_of_any_length_in_any_pieces_are_written_whole(tmp_path, size):
    storage = MediaFileStorage(location=str(tmp_path), write_through=True)
    data = picture_bytes(size)
    for sizes in ([786_432], [1, 4095, 70_001], [BUFFER + 3]):
        name = storage.save("assets/picture.png", Pieces(data, sizes))
        assert os.path.getsize(storage.path(name)) == size
        assert resident_pages(storage.path(name)) == 0
        with storage.open(name) as saved:
            assert saved.read() == data


def direct_writes(monkeypatch) -> list[tuple[int, bool]]:
    """Each write of the storage: its length and whether it went directly to the disk."""
    seen = []
    write = os.write

    def watched(fd, data):
        seen.append((len(data), bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT)))
        return write(fd, data)

    monkeypatch.setattr(os, "write", watched)
    return seen


def test_whole_blocks_go_to_the_disk_directly_and_only_the_last_part_block_through_the_cache(tmp_path, monkeypatch):
    writes = direct_writes(monkeypatch)
    storage = MediaFileStorage(location=str(tmp_path), write_through=True)
    data = picture_bytes(BUFFER + 3 * BLOCK + 100)
    name = storage.save("assets/picture.png", ContentFile(data))
    assert writes == [(BUFFER, True), (3 * BLOCK, True), (100, False)]
    assert storage.open(name).read() == data


def test_a_file_system_that_takes_no_direct_writes_gets_the_file_through_the_cache(tmp_path, monkeypatch):
    setfl = fcntl.fcntl

    def refuses_direct(fd, command, arg=0):
        if command == fcntl.F_SETFL and arg & os.O_DIRECT:
            raise OSError(errno.EINVAL, "Invalid argument")
        return setfl(fd, command, arg)

    monkeypatch.setattr(fcntl, "fcntl", refuses_direct)
    writes = direct_writes(monkeypatch)
    storage = MediaFileStorage(location=str(tmp_path), write_through=True)
    data = picture_bytes(BUFFER + 5000)
    name = storage.save("assets/picture.png", Pieces(data, [300_000]))
    assert writes and not any(direct for _, direct in writes)
    assert resident_pages(storage.path(name)) == 0
    assert storage.open(name).read() == data


def test_a_direct_write_refused_midway_goes_on_through_the_cache(tmp_path, monkeypatch):
    write = os.write
    refused = []

    def refuses_the_second(fd, data):
        if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT and len(refused) < 2:
            refused.append(len(data))
            if len(refused) == 2:
                raise OSError(errno.EINVAL, "Invalid argument")
        return write(fd, data)

    monkeypatch.setattr(os, "write", refuses_the_second)
    storage = MediaFileStorage(location=str(tmp_path), write_through=True)
    data = picture_bytes(3 * BUFFER + 777)
    name = storage.save("assets/picture.png", Pieces(data, [65_536]))
    assert refused == [BUFFER, BUFFER]
    assert resident_pages(storage.path(name)) == 0
    assert storage.open(name).read() == data


def test_an_upload_in_a_temporary_file_is_moved_and_written_through(tmp_path, settings):
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    storage = MediaFileStorage(location=str(tmp_path / "media"), write_through=True)
    data = picture_bytes()
    upload = TemporaryUploadedFile("picture.png", "image/png", len(data), None)
    upload.write(data)
    upload.flush()
    name = storage.save("assets/picture.png", upload)
    upload.close()  # its file moved: nothing left to remove
    assert resident_pages(storage.path(name)) == 0
    assert storage.open(name).read() == data


def test_a_storage_that_allows_overwriting_replaces_the_file(tmp_path):
    storage = MediaFileStorage(location=str(tmp_path), write_through=True, allow_overwrite=True)
    storage.save("a.png", ContentFile(b"one" * 5000))
    name = storage.save("a.png", ContentFile(b"two"))
    assert name == "a.png" and storage.open(name).read() == b"two"


def test_a_platform_without_direct_writes_gets_the_file_through_the_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(file_storage, "DIRECT", 0)  # as on macOS
    writes = direct_writes(monkeypatch)
    storage = MediaFileStorage(location=str(tmp_path), write_through=True)
    data = picture_bytes(BUFFER + 5000)
    name = storage.save("assets/picture.png", Pieces(data, [300_000]))
    assert [size for size, _ in writes] == [300_000, 300_000, 300_000, 153_576]  # as they came, not copied
    assert resident_pages(storage.path(name)) == 0
    assert storage.open(name).read() == data
