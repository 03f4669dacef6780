"""The images call record: a Generation with output assets under pre-assigned ids, inputs and usage."""

from __future__ import annotations

import pytest

from studio.core.content_hash import of as hash_of
from studio.core.errors import UnreadableAnswer, UpstreamError
from studio.core.images import EDITS, GENERATIONS, ImageItem, ImageJob, SourceImage
from studio.core.principal import Principal
from studio.gateway.images.record import ImagesRecord, readable_usage
from studio.gateway.media.storage import store_bytes
from studio.models import Asset, Generation, UsageRecord
from tests.gateway.catalog import model_entry
from tests.gateway.images.conftest import png
from tests.gateway.media.written import (
    by_table,
    fails_without_a_trace,
    media_files,
    one_statement_per_table,
    writes,
)

pytestmark = pytest.mark.django_db(transaction=True)


def make(account, route=GENERATIONS, **job_fields) -> ImagesRecord:
    job = ImageJob(route=route, model=model_entry("kappa-image-1"), family="standard",
                   fields={"prompt": "a kite", "size": "1024x1024"}, prompt="a kite", **job_fields)
    return ImagesRecord(principal=Principal(user_id=account.user.id, key_id=account.key.id), job=job)


def test_outputs_keep_their_pre_assigned_ids_and_metadata(alice):
    record = make(alice)
    first = ImageItem(data=png("red"), revised_prompt="a red kite", size="24x16")
    failed = ImageItem(error={"code": "OutputImageSensitive", "message": "no"})
    record.items = [first, failed]
    record.usage = {"input_tokens": 5, "output_tokens": 100, "total_tokens": 105}
    promised = first.asset_id  # a URL naming it may already be out
    record.persist()
    generation = Generation.objects.get(id=record.generation_id)
    assert (generation.status, generation.route, generation.prompt) == ("succeeded", GENERATIONS, "a kite")
    assert generation.parameters["size"] == "1024x1024" and "prompt" not in generation.parameters
    assert generation.parameters["item_errors"] == [{"index": 1, "code": "OutputImageSensitive", "message": "no"}]
    asset = Asset.objects.get(generation=generation)
    assert asset.id == promised and asset.metadata == {"revised_prompt": "a red kite"}
    assert (asset.width, asset.height, asset.content_hash) == (24, 16, hash_of(png("red")))
    usage = UsageRecord.objects.get()
    assert (usage.images, usage.total_tokens, usage.route) == (1, 105, GENERATIONS)
    assert record.items == []  # image bytes released


def test_a_picture_that_is_not_base64_is_left_out_and_the_rest_of_the_record_written(alice):
    record = make(alice)
    record.items = [ImageItem(b64="x"), ImageItem(data=png("red"))]
    record.usage = {"input_tokens": 5, "output_tokens": 100, "total_tokens": 105}
    record.persist()  # at once: no retry of a record that can never be written
    assert Asset.objects.get(generation_id=record.generation_id).index == 1
    assert UsageRecord.objects.get().total_tokens == 105


@pytest.mark.parametrize("usage", [None, {}, {"input_tokens": 5, "output_tokens": "7", "total_tokens": 12.0,
                                              "input_tokens_details": {"cached_tokens": 1}}])
def test_readable_usage_is_kept_as_the_vendor_sent_it(usage):
    assert readable_usage(usage) == (usage or {})


@pytest.mark.parametrize(("usage", "field"), [
    ("x", "usage"), ([1], "usage"), ({"input_tokens": "x"}, "usage.input_tokens"),
    ({"output_tokens": [1]}, "usage.output_tokens"), ({"total_tokens": -1}, "usage.total_tokens"),
    ({"input_tokens_details": {"cached_tokens": {}}}, "usage.input_tokens_details.cached_tokens"),
])
def test_usage_of_another_shape_is_the_upstreams_fault(usage, field):
    with pytest.raises(UnreadableAnswer) as caught:
        readable_usage(usage)
    assert field in caught.value.message and caught.value.status == 502


def test_no_item_is_blocked_and_an_error_is_failed(alice):
    blocked = make(alice)
    blocked.items = [ImageItem(error={"code": "x"})]
    blocked.persist()
    assert Generation.objects.get(id=blocked.generation_id).status == "blocked"
    failed = make(alice)
    failed.error = UpstreamError("vendor down")
    failed.persist()
    generation = Generation.objects.get(id=failed.generation_id)
    assert generation.status == "failed" and generation.error["status"] == 502
    assert UsageRecord.objects.filter(status_code=502).count() == 1


def test_inputs_are_stored_with_their_roles_and_lineage_continues(alice):
    earlier = Generation.objects.create(user=alice.user, model_id="kappa-image-1", route=GENERATIONS)
    stored = store_bytes(png("blue"), "image/png", owner_id=alice.user.id, generation_id=earlier.id)
    image = SourceImage(data=png("blue"), mime="image/png", width=24, height=16, field="images[0].file_id",
                        asset_id=stored.id)
    mask = SourceImage(data=png("white"), mime="image/png", width=24, height=16, field="mask")
    record = make(alice, route=EDITS, images=[image], mask=mask)
    record.items = [ImageItem(data=png("green"))]
    record.persist()
    generation = Generation.objects.get(id=record.generation_id)
    assert generation.parent_id == earlier.id
    assert generation.parameters["inputs"] == [{"role": "image", "field": "images[0].file_id"},
                                               {"role": "mask", "field": "mask"}]
    assert Asset.objects.get(id=stored.id).metadata["input_of"] == [{"generation": str(generation.id),
                                                                     "role": "image"}]
    mask_asset = Asset.objects.get(is_input=True, content_hash=hash_of(png("white")))
    assert mask_asset.metadata["input_of"][0]["role"] == "mask"


def test_a_studio_row_is_updated_and_streamed_outputs_are_not_stored_twice(alice):
    record = make(alice)
    record.preexisting = True
    Generation.objects.create(id=record.generation_id, user=alice.user, model_id="kappa-image-1", route="studio",
                              prompt="a kite")
    item = ImageItem(data=png("gold"))
    record.items = [item]
    record.stored.add(item.asset_id)
    record.extra = {"compare": "cmp-2"}
    record.persist()
    generation = Generation.objects.get(id=record.generation_id)
    assert generation.status == "succeeded" and generation.parameters["compare"] == "cmp-2"
    assert not Asset.objects.filter(generation=generation).exists()
    assert UsageRecord.objects.get().route == "studio"


def test_a_batch_is_written_in_a_few_statements_per_table_and_its_files_go_if_it_fails(alice):
    """A busy gateway's images records go in together: for three records, two INSERTs (of two
    rows and of one) for the generations, two for their pictures, two for the usage rows and one
    UPDATE of the key's last use, not one statement per record and table. A batch that
    the recorder cannot write leaves no picture file of a record it could not write, which keeps its
    images for the next try."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    colors = ("red", "green", "blue")

    def made(color: str) -> ImagesRecord:
        record = make(alice)
        record.items = [ImageItem(data=png(color), size="24x16")]
        record.usage = {"input_tokens": 5, "output_tokens": 100, "total_tokens": 105}
        return record

    before = media_files()
    batch = [made(color) for color in colors]
    with CaptureQueriesContext(connection) as queries:
        ImagesRecord.persist_batch(batch)
    assert by_table(queries.captured_queries) == one_statement_per_table()
    assert len(writes(queries.captured_queries)) == 7
    for record, color in zip(batch, colors, strict=True):
        asset = Asset.objects.get(generation_id=record.generation_id)
        assert asset.content_hash == hash_of(png(color)) and asset.file.read() == png(color)
        assert record.items == []
    assert UsageRecord.objects.filter(images=1, total_tokens=105).count() == 3
    assert len(media_files() - before) == 3

    good, broken = made("navy"), made("maroon")
    fails_without_a_trace(good, broken)
    assert len(broken.items) == 1 and good.items == []  # kept for the next try
