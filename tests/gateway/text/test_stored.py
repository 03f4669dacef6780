"""Stored responses: kept unless ``store: false``, with their input items; read, listed page by page
and deleted by the user whose key made them only; anyone else gets the same 404 as for no such id."""

from __future__ import annotations

import pytest

from studio.core.errors import BadRequest, NotFound
from studio.core.principal import Principal
from studio.gateway import recording
from studio.gateway.text import stored
from studio.gateway.text.translation import Context

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
