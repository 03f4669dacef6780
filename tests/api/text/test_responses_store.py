"""Stored responses: ``GET``/``DELETE /v1/responses/{id}``, ``input_items``, ``store: false``,
one user's responses hidden from another, the id a failed stream keeps, ``previous_response_id``
and the retention period."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from studio.models import StoredResponse
from tests.api.text.test_responses import URL, auth, events

pytestmark = pytest.mark.django_db(transaction=True)



@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
async def test_a_response_is_stored_listed_and_deleted(client, alice, model):
    made = (await client.post(URL, headers=auth(alice), json={
        "model": model, "input": [{"role": "user", "content": "first"},
                                  {"role": "assistant", "content": "ok"},
                                  {"role": "user", "content": [{"type": "input_text", "text": "second"}]}]})).json()
    got = await client.get(f"{URL}/{made['id']}", headers=auth(alice))
    assert got.status_code == 200 and got.json() == made
    items = (await client.get(f"{URL}/{made['id']}/input_items", headers=auth(alice))).json()
    assert items["object"] == "list" and items["has_more"] is False
    assert [i["content"][0]["text"] for i in items["data"]] == ["second", "ok", "first"]  # newest first
    assert items["first_id"] == items["data"][0]["id"] and items["last_id"] == items["data"][-1]["id"]
    page = (await client.get(f"{URL}/{made['id']}/input_items?order=asc&limit=2", headers=auth(alice))).json()
    assert [i["content"][0]["text"] for i in page["data"]] == ["first", "ok"] and page["has_more"] is True
    rest = (await client.get(f"{URL}/{made['id']}/input_items?order=asc&after={page['last_id']}",
                             headers=auth(alice))).json()
    assert [i["content"][0]["text"] for i in rest["data"]] == ["second"]
    deleted = await client.delete(f"{URL}/{made['id']}", headers=auth(alice))
    assert deleted.json() == {"id": made["id"], "object": "response.deleted", "deleted": True}
    gone = await client.get(f"{URL}/{made['id']}", headers=auth(alice))
    assert gone.status_code == 404 and gone.json()["error"]["type"] == "invalid_request_error"


async def test_store_false_and_other_users_get_404(client, alice, make_account):
    bob = make_account("bob")
    kept = (await client.post(URL, headers=auth(alice), json={"model": "omicron-4-mini", "input": "mine"})).json()
    other = await client.get(f"{URL}/{kept['id']}", headers=auth(bob))
    assert other.status_code == 404 and other.json()["error"]["code"] != "model_not_found"
    assert (await client.delete(f"{URL}/{kept['id']}", headers=auth(bob))).status_code == 404
    assert (await client.get(f"{URL}/{kept['id']}/input_items", headers=auth(bob))).status_code == 404
    unstored = (await client.post(URL, headers=auth(alice), json={
        "model": "omicron-4-mini", "input": "forget me", "store": False})).json()
    assert unstored["store"] is False
    assert (await client.get(f"{URL}/{unstored['id']}", headers=auth(alice))).status_code == 404


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
async def test_a_streamed_response_is_stored_under_the_id_it_announced(client, alice, model):
    response = await client.post(URL, headers=auth(alice), json={"model": model, "input": "hello", "stream": True})
    parsed = events(response.text)
    created, final = parsed[0][1]["response"], parsed[-1][1]["response"]
    assert created["id"] == final["id"]
    got = (await client.get(f"{URL}/{created['id']}", headers=auth(alice))).json()
    assert got["status"] == "completed" and got["output"] == final["output"] and got["model"] == model
    # The stream's final usage carries the call's cost; the stored response's is the vendor's own.
    assert "cost_usd" in final["usage"] and "cost_usd" not in got["usage"]
    assert {k: v for k, v in final["usage"].items() if k != "cost_usd"} == got["usage"]


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
async def test_a_failed_stream_keeps_the_id_of_response_created(client, alice, model):
    response = await client.post(URL, headers=auth(alice), json={
        "model": model, "input": "one two three [fail-midstream] four", "stream": True})
    parsed = events(response.text)
    assert parsed[-1][0] == "response.failed"
    failed = parsed[-1][1]["response"]
    assert failed["id"] == parsed[0][1]["response"]["id"] and failed["error"]["code"] == "server_error"
    got = (await client.get(f"{URL}/{failed['id']}", headers=auth(alice))).json()
    assert got["status"] == "failed"


@pytest.mark.parametrize("model", ["omicron-4-mini", "epsilon-4.5"])
async def test_previous_response_id_gives_the_model_the_earlier_turns(client, alice, model):
    first = (await client.post(URL, headers=auth(alice), json={
        "model": model, "input": "my name is Zed", "instructions": "answer as a pirate would"})).json()
    alone = (await client.post(URL, headers=auth(alice), json={"model": model, "input": "who am I"})).json()
    second = (await client.post(URL, headers=auth(alice), json={
        "model": model, "input": "who am I", "previous_response_id": first["id"]})).json()
    assert second["previous_response_id"] == first["id"] and second["instructions"] is None
    # The earlier question and answer were read, the earlier instructions were not.
    earlier = first["usage"]["input_tokens"] + first["usage"]["output_tokens"]
    grown = second["usage"]["input_tokens"] - alone["usage"]["input_tokens"]
    assert 0 < grown <= earlier
    response = await client.post(URL, headers=auth(alice), json={
        "model": model, "input": "and again", "previous_response_id": second["id"], "stream": True})
    parsed = events(response.text)
    assert {d["response"]["previous_response_id"] for n, d in parsed if n.startswith("response.")
            and n.count(".") == 1} == {second["id"]}
    assert parsed[-1][1]["response"]["usage"]["input_tokens"] > second["usage"]["input_tokens"]


async def test_an_unknown_or_foreign_previous_response_is_400(client, alice, make_account):
    bob = make_account("bob")
    kept = (await client.post(URL, headers=auth(alice), json={"model": "omicron-4-mini", "input": "mine"})).json()
    for account, response_id in ((alice, "resp_unknown"), (bob, kept["id"])):
        for stream in (False, True):
            refused = await client.post(URL, headers=auth(account), json={
                "model": "omicron-4-mini", "input": "x", "previous_response_id": response_id, "stream": stream})
            assert refused.status_code == 400
            assert refused.json() == {"error": {
                "message": f"Previous response with id '{response_id}' not found.", "type": "invalid_request_error",
                "param": "previous_response_id", "code": "previous_response_not_found"}}


async def test_an_expired_response_is_gone_everywhere(client, alice, settings):
    kept = (await client.post(URL, headers=auth(alice), json={"model": "omicron-4-mini", "input": "old"})).json()
    from studio.gateway import recording

    await recording.drain()
    await StoredResponse.objects.filter(id=kept["id"]).aupdate(created=timezone.now() - timedelta(days=30, minutes=1))
    assert (await client.get(f"{URL}/{kept['id']}", headers=auth(alice))).status_code == 404
    assert (await client.get(f"{URL}/{kept['id']}/input_items", headers=auth(alice))).status_code == 404
    assert (await client.delete(f"{URL}/{kept['id']}", headers=auth(alice))).status_code == 404
    continued = await client.post(URL, headers=auth(alice), json={
        "model": "omicron-4-mini", "input": "x", "previous_response_id": kept["id"]})
    assert continued.json()["error"]["code"] == "previous_response_not_found"
    settings.STUDIO_RESPONSE_RETENTION_DAYS = 31
    assert (await client.get(f"{URL}/{kept['id']}", headers=auth(alice))).status_code == 200
