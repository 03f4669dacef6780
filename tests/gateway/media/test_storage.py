"""Storing media once: the file, its Asset row (kind, size, digest, visibility) and de-duplication."""

from __future__ import annotations

import hashlib

import pytest

from studio.gateway.media.storage import image_size, kind_of, store_bytes
from studio.models import Asset, AssetKind, Membership, Team, Visibility
from tests.gateway.media.samples import image_bytes

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
    assert stored.sha256 == hashlib.sha256(data).hexdigest()
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
    assert Asset.objects.filter(owner=user, sha256=first.sha256).count() == 3


def test_a_stored_asset_is_saved_and_can_be_changed_at_once(user) -> None:
    asset = store_bytes(image_bytes("PNG"), "image/png", owner_id=user.id)
    asset.metadata = {"input_of": [{"role": "mask"}]}
    asset.save(update_fields=["metadata"])  # an update of the row just written, not a second insert
    assert Asset.objects.get(id=asset.id).metadata == {"input_of": [{"role": "mask"}]}
    assert Asset.objects.count() == 1
