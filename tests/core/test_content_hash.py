"""Content hashes of stored media: BLAKE3, named by algorithm, whole or a piece at a time, and the
values a look-up asks for while assets hashed with SHA-256 remain."""

from __future__ import annotations

import hashlib
import os

from studio.core import content_hash

EMPTY_BLAKE3 = "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"  # the reference test vector


def test_a_content_hash_names_its_algorithm_and_fits_the_column() -> None:
    assert content_hash.of(b"") == f"blake3:{EMPTY_BLAKE3}"
    value = content_hash.of(os.urandom(1000))
    assert value.startswith("blake3:") and len(value) == content_hash.SIZE == 71
    assert content_hash.of(b"a") != content_hash.of(b"b")


def test_pieces_hash_as_the_whole() -> None:
    data = os.urandom(3 * 65536 + 17)
    hasher = content_hash.Hasher()
    for at in range(0, len(data), 65536):
        hasher.update(memoryview(data)[at:at + 65536])
    assert hasher.text() == content_hash.of(data) == content_hash.of(bytearray(data))


def test_the_hash_of_assets_stored_before_is_their_marked_sha256() -> None:
    data = b"picture bytes"
    assert content_hash.legacy_of(data) == "sha256:" + hashlib.sha256(data).hexdigest()
