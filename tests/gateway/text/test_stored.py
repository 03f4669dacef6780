"""Stored responses: kept unless ``store: false``, with their input items; read, listed page by page
and deleted by the user whose key made them only; anyone else gets the same 404 as for no such id.
As context: ``previous_response_id`` puts the stored turns before the new input (the upstream never
sees the gateway's id), for an upstream that speaks responses and for one reached through
translation; expiry and the worker's pruning."""

from __future__ import annotations

from datetime import timedelta

import orjson
import pytest
from django.db import transaction
from django.utils import timezone

from studio.core.errors import BadRequest, NotFound
from studio.core.principal import Principal
from studio.gateway import recording
from studio.gateway.text import engine, stored
from studio.gateway.text.translation import Context
from studio.models import StoredResponse
from tests.providers.fake_text_vendor import json_answer, mounted_vendor, sse_answer

pytestmark = pytest.mark.django_db(transaction=True)


def context() -> Context:
    return Context(model="omicron-4-mini", upstream_model="vendor-model", stream=False, include_usage=False)


def response(rid: str = "resp_one") -> dict:
    return {"id": rid, "object": "response", "status": "completed", "model": "omicron-4-mini",
            "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}]}


@pytest.fixture
def users(django_user_model) -> tuple[Principal, Principal]:
    alice = django_user_model.objects.create_user(username="alice")
    bob = django_user_model.objects.create_user(username="bob")
    return Principal(user_id=alice.id), Principal(user_id=bob.id)


def test_store_is_the_default() -> None:
    assert stored.wants_store({}) is True
    assert stored.wants_store({"store": True}) is True
    assert stored.wants_store({"store": None}) is True
    assert stored.wants_store({"store": False}) is False


def test_a_string_input_is_one_user_message_item() -> None:
    ctx = context()
    [item] = stored.input_items({"input": "tell me a joke"}, ctx)
    assert item == {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "tell me a joke"}],
                    "status": "completed", "id": ctx.id("msg_in0_")}


def test_items_keep_their_own_ids_and_get_one_otherwise() -> None:
    ctx = context()
    body = {"input": [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi, how can I help?"},
        {"type": "function_call_output", "call_id": "call_1", "output": "42"},
        {"type": "message", "role": "user", "id": "msg_client", "content": [{"type": "input_text", "text": "x"}]},
        "not an item",
    ]}
    items = stored.input_items(body, ctx)
    assert [item["id"] for item in items] == [ctx.id("msg_in0_"), ctx.id("msg_in1_"), ctx.id("item_in2_"),
                                              "msg_client"]
    assert items[1]["content"] == [{"type": "output_text", "text": "hi, how can I help?"}]  # the assistant's
    assert items[2] == {"type": "function_call_output", "call_id": "call_1", "output": "42", "id": ctx.id("item_in2_")}
    assert len({item["id"] for item in items}) == 4
    assert body["input"][0] == {"role": "user", "content": "hello"}  # the request itself is left alone


async def keep(principal: Principal, body: dict, rid: str = "resp_one", ctx: Context | None = None) -> None:
    stored.keep(principal, "omicron-4-mini", body, ctx or context(), response(rid))
    await recording.drain()


async def test_a_kept_response_is_read_back_by_its_owner_only(users) -> None:
    alice, bob = users
    await keep(alice, {"input": "hello"})
    assert await stored.retrieve(alice, "resp_one") == response()
    with pytest.raises(NotFound) as refused:
        await stored.retrieve(bob, "resp_one")
    with pytest.raises(NotFound) as missing:
        await stored.retrieve(alice, "resp_never")
    assert refused.value.param == missing.value.param == "response_id"
    assert str(refused.value) == "Response with id 'resp_one' not found."  # nothing tells it exists


async def test_store_false_keeps_nothing(users) -> None:
    alice, _ = users
    await keep(alice, {"input": "hello", "store": False})
    with pytest.raises(NotFound):
        await stored.retrieve(alice, "resp_one")


async def test_a_response_just_kept_is_found_before_its_write_has_landed(users) -> None:
    alice, _ = users
    stored.keep(alice, "omicron-4-mini", {"input": "hello"}, context(), response("resp_fresh"))
    assert (await stored.retrieve(alice, "resp_fresh"))["id"] == "resp_fresh"


async def test_a_kept_response_waits_for_company_and_a_lookup_here_writes_it_at_once(users, settings) -> None:
    """A stored response's write may wait the recorder's linger, as usage rows do; a lookup in the
    process holding it does not wait that out."""
    import asyncio

    alice, _ = users
    settings.STUDIO_RECORDER_LINGER_MS = 60_000
    stored.keep(alice, "omicron-4-mini", {"input": "hello"}, context(), response("resp_waiting"))
    await asyncio.sleep(0.05)
    assert not await StoredResponse.objects.filter(id="resp_waiting").aexists()  # waiting for company
    found = await asyncio.wait_for(stored.previous_turns(alice, "resp_waiting"), 5)
    assert found[-1] == response("resp_waiting")["output"][0]


async def test_a_response_another_process_is_still_writing_is_found_once_it_lands(users, settings) -> None:
    """Another process's recorder may hold a response for up to its linger: a lookup that finds
    nothing looks again after that long, and only then is the id unknown."""
    import asyncio

    from asgiref.sync import sync_to_async

    alice, _ = users
    settings.STUDIO_RECORDER_LINGER_MS = 200
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # several web processes share Redis (not reached here)

    async def other_process_writes() -> None:  # not through this process's recorder
        await asyncio.sleep(0.1)
        await sync_to_async(stored.ResponseRecord(alice, "omicron-4-mini", response("resp_elsewhere"), []).persist)()

    writing = asyncio.create_task(other_process_writes())
    assert (await stored.retrieve(alice, "resp_elsewhere"))["id"] == "resp_elsewhere"
    assert (await stored.previous_turns(alice, "resp_elsewhere"))[-1] == response()["output"][0]
    await writing
    with pytest.raises(BadRequest):
        await stored.previous_turns(alice, "resp_nowhere")


async def test_a_single_process_answers_an_unknown_id_without_waiting_for_others(users, settings) -> None:
    """Without Redis this process is the only one keeping responses: once its own recorder is
    drained, a miss is final, however long the recorder's linger."""
    import asyncio

    alice, _ = users
    settings.REDIS_URL = ""
    settings.STUDIO_RECORDER_LINGER_MS = 60_000
    stored.keep(alice, "omicron-4-mini", {"input": "hello"}, context(), response("resp_here"))
    assert (await asyncio.wait_for(stored.retrieve(alice, "resp_here"), 5))["id"] == "resp_here"
    with pytest.raises(NotFound):
        await asyncio.wait_for(stored.retrieve(alice, "resp_nowhere"), 5)
    with pytest.raises(BadRequest):
        await asyncio.wait_for(stored.previous_turns(alice, "resp_nowhere"), 5)


async def test_a_batch_of_kept_responses_is_written_whole_and_a_repeated_id_keeps_the_latest(users) -> None:
    alice, bob = users
    await keep(alice, {"input": "first"}, rid="resp_again")
    first_created = (await StoredResponse.objects.aget(id="resp_again")).created
    # Queued together, they reach the database in one batch of the recorder.
    for n in range(5):
        stored.keep(alice, "omicron-4-mini", {"input": f"turn {n}"}, context(), response(f"resp_{n}"))
    stored.keep(bob, "omicron-4-mini", {"input": "second"}, context(), {**response("resp_again"), "status": "x"})
    stored.keep(alice, "omicron-4-mini", {"input": "third"}, context(), response("resp_again"))
    await recording.drain()
    rows = {row.id: row async for row in StoredResponse.objects.all()}
    assert set(rows) == {"resp_again", *(f"resp_{n}" for n in range(5))}
    assert rows["resp_3"].input_items[0]["content"][0]["text"] == "turn 3" and rows["resp_3"].user_id == alice.user_id
    again = rows["resp_again"]  # the last write of the id wins, as one write after another would
    assert again.user_id == alice.user_id and again.input_items[0]["content"][0]["text"] == "third"
    assert again.response == response("resp_again") and again.created == first_created
    assert await stored.retrieve(alice, "resp_again") == response("resp_again")


def test_a_batch_is_a_few_statements_and_reads_back_every_json_value(users, django_assert_num_queries) -> None:
    alice, _ = users
    records = [stored.ResponseRecord(alice, "omicron-4-mini", response(f"resp_{n % 3}"), []) for n in range(6)]
    odd = {"id": "resp_odd", "text": "naïve “quotes” \u2028 日本", "big": 2**70, "nested": [{"a": None, "b": 1.5}],
           "flag": False}
    records.append(stored.ResponseRecord(alice, "omicron-4-mini", odd, [{"n": 2**64}], [{"role": "user", "content": "é"}]))
    records.append(stored.ResponseRecord(alice, "omicron-4-mini", {"id": "resp_keys", 1: "an int key"}, [], []))
    with transaction.atomic(), django_assert_num_queries(2):  # the recorder's transaction; 5 rows: 4, then 1
        stored.ResponseRecord.persist_batch(records)
    assert StoredResponse.objects.count() == 5
    row = StoredResponse.objects.get(id="resp_odd")
    assert (row.response, row.input_items, row.context) == (odd, [{"n": 2**64}], [{"role": "user", "content": "é"}])
    assert StoredResponse.objects.get(id="resp_keys").response == {"id": "resp_keys", "1": "an int key"}  # as json does
    assert StoredResponse.objects.get(id="resp_2").response == response("resp_2")


async def test_delete_removes_it_for_good_and_only_for_its_owner(users) -> None:
    alice, bob = users
    await keep(alice, {"input": "hello"})
    with pytest.raises(NotFound):
        await stored.delete(bob, "resp_one")
    assert await stored.delete(alice, "resp_one") == {"id": "resp_one", "object": "response.deleted", "deleted": True}
    with pytest.raises(NotFound):
        await stored.retrieve(alice, "resp_one")
    with pytest.raises(NotFound):
        await stored.delete(alice, "resp_one")


async def test_input_items_are_listed_page_by_page(users) -> None:
    alice, bob = users
    body, ctx = {"input": [{"role": "user", "content": f"turn {n}"} for n in range(5)]}, context()
    ids = [item["id"] for item in stored.input_items(body, ctx)]
    await keep(alice, body, ctx=ctx)

    newest = await stored.list_input_items(alice, "resp_one", limit=2)
    assert [item["id"] for item in newest["data"]] == ids[:-3:-1]
    assert (newest["object"], newest["first_id"], newest["last_id"], newest["has_more"]) == (
        "list", ids[4], ids[3], True)
    rest = await stored.list_input_items(alice, "resp_one", limit=10, after=newest["last_id"])
    assert [item["id"] for item in rest["data"]] == ids[2::-1] and rest["has_more"] is False
    oldest = await stored.list_input_items(alice, "resp_one", order="asc", limit=5)
    assert [item["id"] for item in oldest["data"]] == ids and oldest["has_more"] is False
    last = await stored.list_input_items(alice, "resp_one", order="asc", after=ids[-1])
    assert (last["data"], last["first_id"], last["last_id"], last["has_more"]) == ([], None, None, False)
    with pytest.raises(NotFound):
        await stored.list_input_items(bob, "resp_one")


@pytest.mark.parametrize(("options", "param"), [({"order": "newest"}, "order"), ({"limit": 0}, "limit"),
                                                ({"limit": 101}, "limit"), ({"after": "msg_nope"}, "after")])
async def test_a_bad_list_query_names_its_field(users, options: dict, param: str) -> None:
    alice, _ = users
    await keep(alice, {"input": "hello"})
    with pytest.raises(BadRequest) as refused:
        await stored.list_input_items(alice, "resp_one", **options)
    assert refused.value.param == param and refused.value.status == 400


# -- previous_response_id and retention, through the engine ----------------------------------------
OPENAI = "http://stored-openai.test/v1"
ANTHROPIC = "http://stored-anthropic.test"


def who(account) -> Principal:
    return Principal(user_id=account.user.id, key_id=account.key.id)


def answer_item(text: str) -> dict:
    return {"type": "message", "id": f"msg_{text}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def vendor_response(request: dict, text: str) -> dict:
    body = request["body"]
    return {"id": f"resp_vendor_{text}", "object": "response", "status": "completed",
            "model": body["model"], "instructions": body.get("instructions"),
            "previous_response_id": None, "output": [answer_item(text)],
            "usage": {"input_tokens": 5, "output_tokens": 1, "total_tokens": 6}}


@pytest.fixture
async def openai(catalog):
    async for fake in mounted_vendor("openai", OPENAI, {"omicron-4-mini": "vendor-mini"}):
        fake.answer = lambda request, fake=fake: json_answer(
            vendor_response(request, f"answer{len(fake.requests)}"))
        yield fake


@pytest.fixture
async def anthropic(catalog):
    async for fake in mounted_vendor("anthropic", ANTHROPIC, {"epsilon-4.5": "vendor-sonnet"}):
        fake.answer = lambda request, fake=fake: json_answer({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "vendor-sonnet",
            "content": [{"type": "text", "text": f"answer{len(fake.requests)}"}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 4, "output_tokens": 1}})
        yield fake


async def respond(account, **body) -> dict:
    call = await engine.prepare(who(account), "responses", orjson.dumps(body))
    out = orjson.loads(await engine.complete(call))
    await recording.drain()
    return out


async def test_a_passed_through_call_sends_the_stored_turns_instead_of_the_id(alice, openai):
    first = await respond(alice, model="omicron-4-mini", input="first", instructions="be brief")
    second = await respond(alice, model="omicron-4-mini", input=[{"role": "user", "content": "second"}],
                           previous_response_id=first["id"])
    third = await respond(alice, model="omicron-4-mini", input="third", previous_response_id=second["id"])
    sent = [request["body"] for request in openai.requests]
    assert "previous_response_id" not in sent[1] and "instructions" not in sent[1]  # not inherited
    assert sent[1]["input"] == [{"role": "user", "content": "first"}, answer_item("answer1"),
                                {"role": "user", "content": "second"}]
    assert sent[2]["input"] == [*sent[1]["input"], answer_item("answer2"), {"role": "user", "content": "third"}]
    assert (second["previous_response_id"], third["previous_response_id"]) == (first["id"], second["id"])
    assert (await stored.retrieve(who(alice), second["id"]))["previous_response_id"] == first["id"]
    items = (await stored.list_input_items(who(alice), third["id"]))["data"]
    assert [item["content"][0]["text"] for item in items] == ["third"]  # the request's own input


async def test_a_streamed_passed_through_call_names_the_previous_response(alice, openai):
    first = await respond(alice, model="omicron-4-mini", input="first")

    def streamed(request):
        obj = vendor_response(request, "streamed")
        return sse_answer([
            b"event: response.created\ndata: " + orjson.dumps(
                {"type": "response.created", "response": {**obj, "status": "in_progress", "output": []}}) + b"\n\n",
            b"event: response.completed\ndata: " + orjson.dumps(
                {"type": "response.completed", "response": obj}) + b"\n\n"])

    openai.answer = streamed
    call = await engine.prepare(who(alice), "responses", orjson.dumps({
        "model": "omicron-4-mini", "input": "again", "previous_response_id": first["id"], "stream": True}))
    pieces = [orjson.loads(piece.split(b"data: ", 1)[1]) async for piece in engine.stream(call)]
    assert [p["response"]["previous_response_id"] for p in pieces] == [first["id"], first["id"]]
    assert len(openai.requests[1]["body"]["input"]) == 3
    await recording.drain()
    kept = await stored.retrieve(who(alice), pieces[-1]["response"]["id"])
    assert kept["previous_response_id"] == first["id"]


async def test_a_translated_call_gets_the_stored_turns_as_messages(alice, anthropic):
    first = await respond(alice, model="epsilon-4.5", input="first", instructions="be brief")
    second = await respond(alice, model="epsilon-4.5", input="second", previous_response_id=first["id"])
    sent = anthropic.requests[1]["body"]
    assert "system" not in sent  # the first call's instructions are not carried over
    assert [(m["role"], m["content"][0]["text"]) for m in sent["messages"]] == [
        ("user", "first"), ("assistant", "answer1"), ("user", "second")]
    assert second["previous_response_id"] == first["id"]


async def test_unknown_other_users_and_expired_ids_are_not_found(alice, make_account, openai, settings):
    first = await respond(alice, model="omicron-4-mini", input="first")
    bob = make_account("bob")
    for account, response_id in ((alice, "resp_nope"), (bob, first["id"])):
        with pytest.raises(BadRequest) as exc:
            await engine.prepare(who(account), "responses", orjson.dumps({
                "model": "omicron-4-mini", "input": "x", "previous_response_id": response_id}))
        assert (exc.value.param, exc.value.code) == ("previous_response_id", "previous_response_not_found")
        assert exc.value.message == f"Previous response with id '{response_id}' not found."
    await StoredResponse.objects.filter(id=first["id"]).aupdate(created=timezone.now() - timedelta(days=31))
    with pytest.raises(BadRequest):
        await engine.prepare(who(alice), "responses", orjson.dumps({
            "model": "omicron-4-mini", "input": "x", "previous_response_id": first["id"]}))
    settings.STUDIO_RESPONSE_RETENTION_DAYS = 60
    assert (await stored.retrieve(who(alice), first["id"]))["id"] == first["id"]
    assert len(openai.requests) == 1  # no refused call went upstream


async def test_prune_expired_deletes_only_responses_past_retention(alice, openai, settings):
    old = await respond(alice, model="omicron-4-mini", input="old")
    new = await respond(alice, model="omicron-4-mini", input="new")
    await StoredResponse.objects.filter(id=old["id"]).aupdate(created=timezone.now() - timedelta(days=30, hours=1))
    assert await stored.prune_expired() == 1
    assert [r.id async for r in StoredResponse.objects.all()] == [new["id"]]
    await StoredResponse.objects.filter(id=new["id"]).aupdate(created=timezone.now() - timedelta(days=2))
    assert await stored.prune_expired() == 0
    settings.STUDIO_RESPONSE_RETENTION_DAYS = 1
    assert await stored.prune_expired() == 1
