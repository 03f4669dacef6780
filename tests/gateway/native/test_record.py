"""The native call record: merged from its frames, persisted as a Generation, assets and usage."""

from __future__ import annotations

import base64
import hashlib
import io

import orjson
import pytest
from PIL import Image

from studio.core.content_hash import of as hash_of
from studio.core.errors import UnreadableAnswer, UpstreamError
from studio.core.principal import Principal
from studio.gateway.media.storage import store_bytes
from studio.gateway.native.record import NativeRecord
from studio.models import ApiKey, Asset, Generation, UsageRecord
from tests.gateway.media.written import fails_without_a_trace, media_files, one_statement_per_table, writes

pytestmark = pytest.mark.django_db(transaction=True)

MODEL = "delta-3.1-flash-image"


def png(color: str = "navy") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (12, 8), color).save(buffer, "PNG")
    return buffer.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def frame(*parts, finish=None, usage=None) -> bytes:
    candidate = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    out: dict = {"candidates": [candidate]}
    if usage:
        out["usageMetadata"] = usage
    return orjson.dumps(out)


def record(account, body, **kw) -> NativeRecord:
    principal = Principal(user_id=account.user.id, key_id=account.key.id)
    return NativeRecord.start(principal, MODEL, "native", body, stream=kw.pop("stream", True))


BODY = {"contents": [{"role": "user", "parts": [{"text": "a lamp"}]}], "generationConfig": {"seed": 3}}


def test_result_merges_every_frame_and_skips_broken_ones(alice):
    rec = record(alice, BODY)
    rec.add_frame(frame({"text": "Here "}))
    rec.add_frame(b"{not json")
    rec.add_frame(frame({"text": "you go"}, {"inlineData": {"mimeType": "image/png", "data": b64(png())}},
                        finish="STOP"))
    result = rec.result()
    assert result.text == "Here you go" and len(result.final_images()) == 1
    assert rec.pending_bytes() == sum(len(f) for f in rec.frames)


def test_parameters_leave_out_contents_and_count_turns(alice):
    rec = record(alice, BODY)
    assert rec.parameters() == {"generationConfig": {"seed": 3}, "stream": True, "turns": 1}


def test_persist_success_stores_outputs_inputs_and_usage(alice):
    source = png("olive")
    body = {"contents": [{"role": "user", "parts": [{"text": "a lamp"},
                                                     {"inlineData": {"mimeType": "image/png", "data": b64(source)}}]}]}
    rec = record(alice, body)
    output = png("gold")
    rec.add_frame(frame({"text": "thinking", "thought": True},
                        {"inlineData": {"mimeType": "image/png", "data": b64(png("gray"))}, "thought": True}))
    rec.add_frame(frame({"inlineData": {"mimeType": "image/png", "data": b64(output)}}, finish="STOP",
                        usage={"promptTokenCount": 10, "candidatesTokenCount": 1290, "totalTokenCount": 1300}))
    rec.first_byte_ms, rec.duration_ms = 12, 340
    assert rec.counted().token_images == 1  # charged first, as a call is: the thought image is not one made
    rec.persist()
    assert rec.frames == [] and rec.merged is None  # the frame bytes are released
    generation = Generation.objects.get(id=rec.generation_id)
    assert (generation.status, generation.finish_reason, generation.prompt) == ("succeeded", "STOP", "a lamp")
    assert (generation.first_byte_ms, generation.duration_ms) == (12, 340)
    outputs = list(Asset.objects.filter(generation=generation))
    assert [a.content_hash for a in outputs] == [hash_of(output)]  # no thought image kept
    stored_input = Asset.objects.get(is_input=True, owner=alice.user)
    assert stored_input.content_hash == hash_of(source)
    assert stored_input.metadata["input_of"] == [str(generation.id)]
    usage = UsageRecord.objects.get(model_id=MODEL)
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens, usage.images, usage.status_code) == (
        10, 1290, 1300, 1, 200)
    assert ApiKey.objects.get(id=alice.key.id).last_used_at is not None


def test_no_image_is_blocked_with_the_vendors_reason(alice):
    rec = record(alice, BODY)
    rec.add_frame(frame({"text": "I can't draw that"}, finish="IMAGE_SAFETY"))
    rec.persist()
    generation = Generation.objects.get(id=rec.generation_id)
    assert generation.status == "blocked" and generation.finish_reason == "IMAGE_SAFETY"
    assert UsageRecord.objects.get(model_id=MODEL).images == 0


def test_failure_is_recorded_with_its_status(alice):
    rec = record(alice, BODY)
    rec.error = UpstreamError("vendor down", code="upstream_down")
    rec.persist()
    generation = Generation.objects.get(id=rec.generation_id)
    assert generation.status == "failed" and generation.finish_reason == ""
    assert generation.error == {"status": 502, "message": "vendor down", "code": "upstream_down"}
    assert UsageRecord.objects.get(model_id=MODEL).status_code == 502


def test_a_usage_count_that_is_no_count_fails_the_call_and_its_record_is_still_written(alice):
    rec = record(alice, BODY)
    rec.add_frame(frame({"inlineData": {"mimeType": "image/png", "data": b64(png())}}, finish="STOP",
                        usage={"promptTokenCount": 5, "candidatesTokenCount": "many", "totalTokenCount": 1295}))
    with pytest.raises(UnreadableAnswer, match="usageMetadata.candidatesTokenCount"):
        rec.check_usage()
    rec.error = UnreadableAnswer("unreadable")
    rec.persist()  # the usage set aside: nothing in it stops the write (or would make it retried)
    usage = UsageRecord.objects.get(model_id=MODEL)
    assert (usage.status_code, usage.input_tokens, usage.output_tokens) == (502, 0, 0)


def test_readable_usage_passes_the_check(alice):
    rec = record(alice, BODY)
    rec.add_frame(frame({"text": "hi"}, finish="STOP",
                        usage={"promptTokenCount": 5, "candidatesTokenCount": 7, "totalTokenCount": 12}))
    rec.check_usage()
    assert rec.result().usage["totalTokenCount"] == 12


def test_outputs_stored_during_the_stream_are_not_stored_twice(alice):
    rec = record(alice, BODY)
    rec.add_frame(frame({"inlineData": {"mimeType": "image/png", "data": b64(png())}}, finish="STOP"))
    rec.preexisting = True
    Generation.objects.create(id=rec.generation_id, user=alice.user, model_id=MODEL, route="studio", prompt="a lamp")
    already = store_bytes(png(), "image/png", owner_id=alice.user.id, generation_id=rec.generation_id)
    rec.stored_outputs[0] = already.id
    rec.persist()
    assert list(Asset.objects.filter(generation_id=rec.generation_id)) == [already]
    assert Generation.objects.get(id=rec.generation_id).status == "succeeded"


def test_replaying_an_earlier_output_links_the_lineage(alice):
    earlier = Generation.objects.create(user=alice.user, model_id=MODEL, route="native", prompt="first")
    made = png("crimson")
    store_bytes(made, "image/png", owner_id=alice.user.id, generation_id=earlier.id)
    body = {"contents": [
        {"role": "user", "parts": [{"text": "first"}]},
        {"role": "model", "parts": [{"inlineData": {"mimeType": "image/png", "data": b64(made)}}]},
        {"role": "user", "parts": [{"text": "now in blue"}]},
    ]}
    rec = record(alice, body)
    assert rec.parent_generation_id() == earlier.id
    assert record(alice, BODY).parent_generation_id() is None


def test_replaying_an_output_stored_before_blake3_still_links_the_lineage(alice, monkeypatch):
    from studio.gateway.media import storage

    earlier = Generation.objects.create(user=alice.user, model_id=MODEL, route="native", prompt="first")
    made = png("olive")
    Asset.objects.create(owner=alice.user, mime="image/png", file="media/old.png", generation=earlier,
                         content_hash="sha256:" + hashlib.sha256(made).hexdigest())
    monkeypatch.setattr(storage, "_legacy_left", True)
    body = {"contents": [
        {"role": "user", "parts": [{"text": "first"}]},
        {"role": "model", "parts": [{"inlineData": {"mimeType": "image/png", "data": b64(made)}}]},
        {"role": "user", "parts": [{"text": "now in blue"}]},
    ]}
    assert record(alice, body).parent_generation_id() == earlier.id


def final_frame(usage: dict, image: bytes = b"") -> bytes:
    return orjson.dumps({"candidates": [{"content": {"role": "model", "parts": [
        {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(image).decode()}}]},
        "finishReason": "STOP", "index": 0}], "usageMetadata": usage, "modelVersion": "v"})


def test_only_the_final_frame_has_a_place_for_the_cost():
    from studio.gateway.native.record import final_usage_at

    usage = {"promptTokenCount": 9, "totalTokenCount": 9}
    early = orjson.dumps({"candidates": [{"content": {"parts": [{"text": "thinking"}]}}], "usageMetadata": usage})
    assert final_usage_at(early) is None
    assert final_usage_at(orjson.dumps({"candidates": [{"finishReason": "STOP"}]})) is None  # no usage to carry it
    frame = final_frame(usage)
    assert frame[final_usage_at(frame) - 1:final_usage_at(frame)] == b"{"


@pytest.mark.parametrize("usage", [{"promptTokenCount": 9, "candidatesTokenCount": 1290, "totalTokenCount": 1299}, {}])
@pytest.mark.parametrize("kind", [bytes, bytearray])
def test_the_cost_joins_the_usage_and_the_frame_stays_json(usage, kind):
    from decimal import Decimal

    from studio.gateway.native.record import billed, final_usage_at, usage_in, with_cost

    frame = kind(final_frame(usage, image=b"x" * 40_000))  # the usage sits past a big image
    priced = with_cost(frame, final_usage_at(frame), Decimal("0.0774045"))
    assert (priced is frame) == (kind is bytearray)  # a big frame is not copied
    parsed = orjson.loads(priced)
    assert parsed["usageMetadata"] == {"costUsd": 0.0774045, **usage}
    assert billed(usage_in(priced)) == billed(usage)


def test_a_write_rolled_back_keeps_the_frames_for_the_next_try(alice):
    from django.db import transaction

    rec = record(alice, BODY)
    rec.add_frame(frame({"inlineData": {"mimeType": "image/png", "data": b64(png())}}, finish="STOP"))
    with pytest.raises(RuntimeError), transaction.atomic():
        rec.persist()
        raise RuntimeError("the commit failed")
    assert rec.pending_bytes() > 0 and not Generation.objects.filter(id=rec.generation_id).exists()
    rec.persist()
    assert Generation.objects.get(id=rec.generation_id).status == "succeeded"
    assert Asset.objects.filter(generation_id=rec.generation_id).count() == 1
    assert rec.frames == [] and rec.merged is None


def test_a_batch_is_written_in_one_statement_per_table_and_its_files_go_if_it_fails(alice):
    """A busy gateway's native records go in together: for four records, one INSERT for the
    generations, one for their pictures, one for the usage rows and one UPDATE of the key's last
    use. A batch the recorder cannot write leaves no picture file of a record it could not write."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def made(color: str) -> NativeRecord:
        rec = record(alice, BODY)
        rec.add_frame(frame({"inlineData": {"mimeType": "image/png", "data": b64(png(color))}}, finish="STOP",
                            usage={"promptTokenCount": 3, "candidatesTokenCount": 1290, "totalTokenCount": 1293}))
        return rec

    before = media_files()
    batch = [made(color) for color in ("gold", "olive", "teal", "plum")]
    with CaptureQueriesContext(connection) as queries:
        NativeRecord.persist_batch(batch)
    assert writes(queries.captured_queries) == one_statement_per_table()
    for rec, color in zip(batch, ("gold", "olive", "teal", "plum"), strict=True):
        asset = Asset.objects.get(generation_id=rec.generation_id)
        assert asset.content_hash == hash_of(png(color)) and asset.file.read() == png(color)
        assert rec.frames == []
    assert UsageRecord.objects.filter(api_key=alice.key, images=1).count() == 4
    assert len(media_files() - before) == 4

    good, broken = made("navy"), made("maroon")
    fails_without_a_trace(good, broken)
    assert broken.pending_bytes() > 0 and good.pending_bytes() == 0  # kept for the next try
