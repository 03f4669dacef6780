"""Storing media once: the file, its Asset row (kind, size, digest, visibility) and de-duplication;
a picture stored straight from its base64 a piece at a time, on local disk and in an S3 bucket."""

from __future__ import annotations

import base64
import hashlib
import os
import tracemalloc
from pathlib import Path

import pytest

from studio.core.content_hash import of as hash_of
from studio.core.errors import GatewayError
from studio.core.images import ImageItem
from studio.gateway.media.storage import (
    Base64Content,
    image_size,
    item_size,
    kind_of,
    store_base64,
    store_bytes,
    store_item,
)
from studio.gateway.native.frames import BigString, PassedString, parse_frame
from studio.models import Asset, AssetKind, Membership, Team, Visibility
from tests.gateway.media.samples import image_bytes
from tests.s3_server import keys

pytestmark = pytest.mark.django_db


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user(username="sam", password="pw-sam-123")


@pytest.mark.parametrize(("mime", "kind"), [
    ("image/png", AssetKind.IMAGE), ("video/mp4", AssetKind.VIDEO), ("audio/wav", AssetKind.AUDIO),
    ("application/pdf", AssetKind.FILE),
])
def test_kind_of(mime: str, kind: str) -> None:
    assert kind_of(mime) == kind


def test_image_size_reads_the_header_and_tolerates_junk() -> None:
    assert image_size(image_bytes("PNG", (17, 9))) == (17, 9)
    assert image_size(b"not an image") == (None, None)


def test_store_bytes_writes_the_file_and_describes_it(user) -> None:
    data = image_bytes("PNG", (20, 10))
    asset = store_bytes(data, "image/png", owner_id=user.id, index=2, metadata={"part_index": 5})
    stored = Asset.objects.get(id=asset.id)
    assert (stored.kind, stored.mime, stored.bytes, stored.width, stored.height) == (
        AssetKind.IMAGE, "image/png", len(data), 20, 10)
    assert stored.content_hash == hash_of(data)
    assert stored.visibility == Visibility.PRIVATE and stored.index == 2 and stored.metadata == {"part_index": 5}
    assert stored.file.name.endswith(f"{asset.id.hex}.png")
    with stored.file.open("rb") as handle:
        assert handle.read() == data


def test_team_media_is_visible_to_the_team(user) -> None:
    team = Team.objects.create(name="Crew", slug="crew")
    Membership.objects.create(team=team, user=user, role="member")
    asset = store_bytes(image_bytes("JPEG"), "image/jpeg", owner_id=user.id, team_id=team.id)
    assert asset.visibility == Visibility.TEAM and asset.file.name.endswith(".jpg")


def test_non_images_get_no_size_and_a_guessed_extension(user) -> None:
    asset = store_bytes(b"%PDF-1.7 tiny", "application/pdf", owner_id=user.id)
    assert (asset.width, asset.height, asset.kind) == (None, None, AssetKind.FILE)
    assert asset.file.name.endswith(".pdf")


def test_dedupe_returns_the_existing_input_of_the_same_bytes(user) -> None:
    data = image_bytes("PNG")
    first = store_bytes(data, "image/png", owner_id=user.id, is_input=True, dedupe=True)
    again = store_bytes(data, "image/png", owner_id=user.id, is_input=True, dedupe=True)
    assert again.id == first.id
    output = store_bytes(data, "image/png", owner_id=user.id, is_input=False, dedupe=True)
    assert output.id != first.id  # an output is never confused with an input
    without = store_bytes(data, "image/png", owner_id=user.id, is_input=True)
    assert without.id != first.id
    assert Asset.objects.filter(owner=user, content_hash=first.content_hash).count() == 3


def test_dedupe_finds_an_input_stored_before_content_hashes_were_blake3(user, monkeypatch) -> None:
    from studio.gateway.media import storage

    data = image_bytes("PNG")
    old = Asset.objects.create(owner=user, mime="image/png", is_input=True, file="media/old.png",
                               content_hash="sha256:" + hashlib.sha256(data).hexdigest())
    monkeypatch.setattr(storage, "_legacy_left", True)
    assert store_bytes(data, "image/png", owner_id=user.id, is_input=True, dedupe=True).id == old.id
    assert storage._legacy_left
    old.delete()  # none left: this process stops asking for SHA-256 hashes
    fresh = store_bytes(data, "image/png", owner_id=user.id, is_input=True, dedupe=True)
    assert fresh.content_hash == hash_of(data) and not storage._legacy_left


def test_a_stored_asset_is_saved_and_can_be_changed_at_once(user) -> None:
    asset = store_bytes(image_bytes("PNG"), "image/png", owner_id=user.id)
    asset.metadata = {"input_of": [{"role": "mask"}]}
    asset.save(update_fields=["metadata"])  # an update of the row just written, not a second insert
    assert Asset.objects.get(id=asset.id).metadata == {"input_of": [{"role": "mask"}]}
    assert Asset.objects.count() == 1


# -- a picture stored straight from its base64, a piece at a time -------------------------------

def in_frame(encoded: bytes) -> BigString:
    """The base64 as a vendor's frame holds it: the ``data`` of an inline image, still in the frame."""
    frame = b'{"inlineData":{"mimeType":"image/png","data":"' + encoded + b'"}}'
    return parse_frame(frame)["inlineData"]["data"]


def big_picture(extra: int) -> bytes:
    """A real PNG header (40×30) and ``extra`` bytes of noise: a picture's size, as incompressible."""
    return image_bytes("PNG", (40, 30)) + os.urandom(extra)


def test_a_picture_is_stored_from_its_base64_without_its_whole_bytes_in_memory(user) -> None:
    data = big_picture(12 << 20)
    big = in_frame(base64.b64encode(data))
    tracemalloc.start()
    try:
        asset = store_base64(big.raw(), big.decode_base64, "image/png", owner_id=user.id, index=1,
                             metadata={"part_index": 3})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < len(data) // 4  # a piece or two of 768 KB, never the 12 MB picture
    stored = Asset.objects.get(id=asset.id)
    assert (stored.bytes, stored.width, stored.height, stored.index) == (len(data), 40, 30, 1)
    assert stored.content_hash == hash_of(data) and stored.metadata == {"part_index": 3}
    with stored.file.open("rb") as handle:
        assert handle.read() == data


def test_a_result_image_in_base64_is_stored_without_its_whole_bytes_in_memory(user) -> None:
    """An OpenAI-style ``b64_json`` picture (``/v1/images``) is stored and sized from its base64."""
    data = big_picture(12 << 20)
    item = ImageItem(b64=base64.b64encode(data).decode("ascii"), mime="image/png")
    tracemalloc.start()
    try:
        size = item_size(item)
        asset = store_item(item, owner_id=user.id, index=2, asset_id=item.asset_id)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert size == (40, 30)
    assert peak < len(data) // 4 and item.data is None  # never decoded whole
    stored = Asset.objects.get(id=item.asset_id)  # the id a signed URL was made with
    assert (stored.id, stored.bytes, stored.width, stored.height, stored.index) == (asset.id, len(data), 40, 30, 2)
    assert stored.content_hash == hash_of(data)
    with stored.file.open("rb") as handle:
        assert handle.read() == data


def test_a_result_image_whose_header_is_long_or_whose_base64_is_wrapped_is_still_sized_and_stored(user) -> None:
    # A JPEG whose size comes after 200 KB of metadata: past the start ``head`` decodes.
    picture = image_bytes("JPEG", (33, 21), icc_profile=os.urandom(200_000))
    long_header = ImageItem(b64=base64.b64encode(picture).decode("ascii"), mime="image/jpeg")
    assert item_size(long_header) == (33, 21)
    # Base64 wrapped at 76 characters (MIME style): decoded as before, tolerantly.
    data = big_picture(3 << 20)
    wrapped = ImageItem(b64=base64.encodebytes(data).decode("ascii"), mime="image/png")
    assert item_size(wrapped) == (40, 30)
    stored = Asset.objects.get(id=store_item(wrapped, owner_id=user.id).id)
    assert stored.content_hash == hash_of(data) and stored.bytes == len(data)
    # A small picture, or one given as bytes, goes the whole way as before.
    small = ImageItem(data=image_bytes("PNG", (5, 6)), mime="image/png")
    assert item_size(small) == (5, 6)
    assert Asset.objects.get(id=store_item(small, owner_id=user.id).id).width == 5


def test_base64_that_turns_tolerant_partway_is_stored_whole(user, monkeypatch) -> None:
    monkeypatch.setattr(Base64Content, "PIECE", 4096)
    data = big_picture(60_000)
    encoded = base64.b64encode(data)
    # JSON may escape "/" as "\/": clean for the first pieces, escaped from the fifth on.
    mixed = encoded[:5 * 4096] + encoded[5 * 4096:].replace(b"/", b"\\/")
    assert b"\\/" in mixed
    big = in_frame(mixed)
    asset = store_base64(big.raw(), big.decode_base64, "image/png", owner_id=user.id)
    stored = Asset.objects.get(id=asset.id)
    assert stored.bytes == len(data) and stored.content_hash == hash_of(data)
    with stored.file.open("rb") as handle:
        assert handle.read() == data


def test_a_picture_is_stored_from_the_pieces_a_frame_relayed_open_kept(user) -> None:
    """The image string of a frame relayed as it came (``PassedString``) is decoded from its pieces
    as they are, clean at first and escaped from the middle on, without being joined first."""
    data = big_picture(3 << 20)
    encoded = base64.b64encode(data)
    half = len(encoded) // 2
    text = encoded[:half] + encoded[half:].replace(b"/", b"\\/")
    chunks = tuple(text[i:i + 65_537] for i in range(0, len(text), 65_537))  # not a multiple of 4
    string = PassedString(chunks)
    asset = store_base64(string.pieces(Base64Content.PIECE), string.decode_base64, "image/png", owner_id=user.id)
    stored = Asset.objects.get(id=asset.id)
    assert (stored.bytes, stored.width, stored.height) == (len(data), 40, 30)
    assert stored.content_hash == hash_of(data)
    with stored.file.open("rb") as handle:
        assert handle.read() == data


def test_base64_that_is_broken_partway_stores_nothing(user, monkeypatch, settings) -> None:
    monkeypatch.setattr(Base64Content, "PIECE", 4096)
    encoded = base64.b64encode(big_picture(60_000))
    big = in_frame(encoded[:30_000] + b"!!!!" + encoded[30_004:])
    with pytest.raises(GatewayError):
        store_base64(big.raw(), big.decode_base64, "image/png", owner_id=user.id)
    assert not Asset.objects.exists()
    assert [p for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file()] == []  # no part of a file left


@pytest.mark.django_db(transaction=True)
def test_a_picture_from_base64_lands_whole_in_an_s3_bucket(user, monkeypatch, s3_bucket, s3_endpoint) -> None:
    monkeypatch.setattr(Base64Content, "PIECE", 4096)  # many pieces, each shorter than S3's reads
    data = big_picture(100_000)
    big = in_frame(base64.b64encode(data))
    asset = store_base64(big.raw(), big.decode_base64, "image/png", owner_id=user.id)
    assert asset.file.name in keys(s3_endpoint, s3_bucket)
    stored = Asset.objects.get(id=asset.id)
    assert stored.bytes == len(data) and (stored.width, stored.height) == (40, 30)
    with stored.file.open("rb") as handle:
        assert handle.read() == data
