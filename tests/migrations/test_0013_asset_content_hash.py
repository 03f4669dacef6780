"""Assets stored before content hashes were BLAKE3 keep their SHA-256 digest, marked as such."""

from __future__ import annotations

import hashlib

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("studio", "0012_usage_owner_indexes")]
AFTER = [("studio", "0013_asset_content_hash")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_stored_digests_are_marked_sha256_and_back(django_user_model):
    user = django_user_model.objects.create_user(username="keeper", password="pw-keeper-123")
    digest = hashlib.sha256(b"old picture").hexdigest()
    try:
        apps = migrate(BEFORE)
        old = apps.get_model("studio", "Asset")
        old.objects.create(owner_id=user.id, mime="image/png", file="a.png", sha256=digest)
        old.objects.create(owner_id=user.id, mime="image/png", file="b.png", sha256="")
        apps = migrate(AFTER)
        new = apps.get_model("studio", "Asset")
        assert sorted(new.objects.values_list("content_hash", flat=True)) == ["", f"sha256:{digest}"]
        new.objects.create(owner_id=user.id, mime="image/png", file="c.png", content_hash="blake3:" + "0" * 64)
        apps = migrate(BEFORE)  # back: the SHA-256 digests as they were, none a BLAKE3 one in their place
        assert sorted(apps.get_model("studio", "Asset").objects.values_list("sha256", flat=True)) == ["", "", digest]
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
