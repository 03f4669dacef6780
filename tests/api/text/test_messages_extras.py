"""The messages family beyond ``POST /v1/messages``: ``count_tokens``, the model list in the
format's shape, ``request-id``, ``anthropic-beta`` forwarding and signed thinking blocks."""

from __future__ import annotations

import base64

import orjson
import pytest

from tests.providers.fake_text_vendor import Answer, FakeVendor, add_upstream, json_answer, sse_answer

pytestmark = pytest.mark.django_db(transaction=True)

VERSION = {"anthropic-version": "2023-06-01"}


def keys(account) -> dict[str, str]:
    return {"x-api-key": account.secret, **VERSION}


async def test_count_tokens_from_a_counting_upstream_and_estimated_otherwise(client, alice):
    body = {"model": "epsilon-4.5", "system": "be brief", "messages": [{"role": "user", "content": "hello there"}]}
    counted = await client.post("/v1/messages/count_tokens", headers=keys(alice), json=body)
    assert counted.status_code == 200 and counted.headers["request-id"].startswith("req_")
    made = await client.post("/v1/messages", headers=keys(alice), json={**body, "max_tokens": 20})
    assert counted.json() == {"input_tokens": made.json()["usage"]["input_tokens"]}
    estimated = await client.post("/v1/messages/count_tokens", headers=keys(alice),
                                  json={**body, "model": "omicron-4-mini"})
    longer = await client.post("/v1/messages/count_tokens", headers=keys(alice), json={
        **body, "model": "omicron-4-mini", "messages": [{"role": "user", "content": "hello there " * 20}]})
    assert 0 < estimated.json()["input_tokens"] < longer.json()["input_tokens"]
    missing = await client.post("/v1/messages/count_tokens", headers=keys(alice), json={"model": "epsilon-4.5"})
    assert missing.status_code == 400 and "messages" in missing.json()["error"]["message"]


async def test_model_list_in_each_format_shape(client, alice):
    anthropic = await client.get("/v1/models?limit=1", headers=keys(alice))
    page = anthropic.json()
    assert anthropic.headers["request-id"].startswith("req_")
    assert set(page) == {"data", "has_more", "first_id", "last_id"} and page["has_more"] is True
    entry = page["data"][0]
    assert {"type", "id", "display_name", "created_at", "lifecycle"} <= set(entry) and entry["type"] == "model"
    assert entry["created_at"].endswith("Z")
    following = (await client.get(f"/v1/models?limit=1&after_id={page['last_id']}", headers=keys(alice))).json()
    assert following["data"][0]["id"] != entry["id"]
    everything = (await client.get("/v1/models?limit=1000", headers=keys(alice))).json()
    assert {m["id"]: m["display_name"] for m in everything["data"]}["epsilon-4.5"] == "Epsilon 4.5"
    one = (await client.get("/v1/models/epsilon-4.5", headers=keys(alice))).json()
    assert one["type"] == "model" and one["display_name"] == "Epsilon 4.5"
    assert one["max_input_tokens"] == 200000 and one["max_tokens"] == 64000
    openai = (await client.get("/v1/models", headers={"Authorization": f"Bearer {alice.secret}"})).json()
    assert openai["object"] == "list" and openai["data"][0]["object"] == "model"
    wrong = await client.get("/v1/models", headers={"x-api-key": "nope", **VERSION})
    assert wrong.status_code == 401 and wrong.json()["type"] == "error"
    assert wrong.json()["error"]["type"] == "authentication_error" and wrong.json()["request_id"].startswith("req_")


async def test_errors_carry_the_request_id_of_the_answer(client, alice):
    bad = await client.post("/v1/messages", headers=keys(alice), json={"model": "epsilon-4.5", "messages": []})
    assert bad.status_code == 400
    assert bad.json()["request_id"] == bad.headers["request-id"] and bad.json()["request_id"].startswith("req_")


async def _the_only_upstream(protocol: str, fake: FakeVendor, model_map: dict[str, str]):
    """Body of a fixture: ``fake`` mounted as the one upstream of ``model_map``'s models (the
    sandbox disabled), unmounted afterwards."""
    from studio.gateway import routing
    from studio.models import Upstream

    fake.mount()
    await add_upstream(protocol, fake.base_url, model_map)
    await Upstream.objects.filter(name="Sandbox").aupdate(enabled=False)
    routing.reset_health()
    yield fake
    fake.unmount()


@pytest.fixture
async def anthropic_vendor(catalog):
    async for fake in _the_only_upstream("anthropic", FakeVendor("http://fake-anthropic-beta.test"),
                                         {"epsilon-4.5": "claude-vendor"}):
        yield fake


async def test_anthropic_beta_reaches_a_messages_upstream(client, alice, anthropic_vendor):
    anthropic_vendor.answer = lambda request: json_answer(
        {"input_tokens": 7} if request["path"].endswith("count_tokens") else
        {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-vendor", "content": [],
         "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 7, "output_tokens": 0}})
    beta = {**keys(alice), "anthropic-beta": "context-1m-2025-08-07"}
    body = {"model": "epsilon-4.5", "messages": [{"role": "user", "content": "x"}]}
    await client.post("/v1/messages", headers=beta, json={**body, "max_tokens": 5})
    counted = await client.post("/v1/messages/count_tokens", headers=beta, json=body)
    assert counted.json() == {"input_tokens": 7}
    sent = anthropic_vendor.requests
    assert [r["path"] for r in sent] == ["/v1/messages", "/v1/messages/count_tokens"]
    assert all(r["headers"]["anthropic-beta"] == "context-1m-2025-08-07" for r in sent)
    assert sent[1]["body"]["model"] == "claude-vendor"
    await client.post("/v1/chat/completions", headers={"Authorization": f"Bearer {alice.secret}"},
                      json={**body, "max_tokens": 5})
    assert "anthropic-beta" not in anthropic_vendor.requests[-1]["headers"]


async def test_thinking_asked_of_a_model_that_cannot_think_is_left_out(client, alice):
    """Claude Code asks for thinking; on a chat model that cannot think (the sandbox's gpt-4o-mini
    refuses ``reasoning_effort`` with OpenAI's 400) the answer comes without it."""
    ask = {"model": "omicron-4-mini", "max_tokens": 200, "thinking": {"type": "enabled", "budget_tokens": 1024},
           "messages": [{"role": "user", "content": "say hello"}]}
    answer = await client.post("/v1/messages", headers=keys(alice), json=ask)
    assert answer.status_code == 200, answer.text
    assert [block["type"] for block in answer.json()["content"]] == ["text"]
    streamed = await client.post("/v1/messages", headers=keys(alice), json={**ask, "stream": True})
    assert streamed.status_code == 200 and "event: message_stop" in streamed.text
    assert "thinking" not in streamed.text


def _reasoner(request) -> Answer:
    """A chat upstream that shows its reasoning (``reasoning_content``, as DeepSeek's and Qwen's do),
    calls a tool it is offered once, and, thinking, refuses a turn of tool calls sent back without
    its reasoning, as DeepSeek's does."""
    body = request["body"]
    for i, message in enumerate(body["messages"]):
        if body.get("reasoning_effort") and message.get("tool_calls") and "reasoning_content" not in message:
            return json_answer({"error": {
                "message": f"Missing `reasoning_content` field in the assistant message at message index {i}. For "
                           "more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
                "type": "invalid_request_error", "param": None, "code": "invalid_request_error"}}, status=400)
    usage = {"prompt_tokens": 9, "completion_tokens": 6, "total_tokens": 15}
    if body.get("tools") and body["messages"][-1]["role"] == "user":
        return json_answer({"id": "c0", "object": "chat.completion", "created": 1, "model": "reasoner", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": None, "reasoning_content": "Look it up.",
                                     "tool_calls": [{"id": "call_1", "type": "function", "function": {
                                         "name": "get_weather", "arguments": '{"city":"Oslo"}'}}]},
             "finish_reason": "tool_calls"}], "usage": usage})
    if not body.get("stream"):
        return json_answer({"id": "c1", "object": "chat.completion", "created": 1, "model": "reasoner", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Done.", "reasoning_content": "Weigh it."},
             "finish_reason": "stop"}], "usage": usage})

    def chunk(delta, finish=None, usage=None):
        return b"data: " + orjson.dumps({"id": "c1", "object": "chat.completion.chunk", "created": 1,
                                         "model": "reasoner", "usage": usage, "choices": [] if delta is None else [
                                             {"index": 0, "delta": delta, "finish_reason": finish}]}) + b"\n\n"
    return sse_answer([chunk({"role": "assistant", "content": ""}), chunk({"reasoning_content": "Weigh"}),
                       chunk({"reasoning_content": " it."}), chunk({"content": "Done."}), chunk({}, "stop"),
                       chunk(None, usage=usage), b"data: [DONE]\n\n"])


@pytest.fixture
async def reasoning_chat_vendor(catalog):
    """``_reasoner`` as omicron-4-mini's one upstream, the model's catalog entry saying it thinks."""
    from studio.models import PlatformModel

    model = await PlatformModel.objects.aget(model_id="omicron-4-mini")
    model.capabilities = {**model.capabilities, "thinking": True}
    await model.asave()
    async for fake in _the_only_upstream("openai", FakeVendor("http://fake-reasoner.test", answer=_reasoner),
                                         {"omicron-4-mini": "reasoner"}):
        yield fake


async def test_thinking_from_a_chat_upstream_is_signed_and_checked_on_replay(client, alice, reasoning_chat_vendor):
    ask = {"model": "omicron-4-mini", "max_tokens": 200, "thinking": {"type": "enabled", "budget_tokens": 1024},
           "messages": [{"role": "user", "content": "think about it"}]}
    answer = (await client.post("/v1/messages", headers=keys(alice), json=ask)).json()
    assert reasoning_chat_vendor.requests[0]["body"]["reasoning_effort"] == "low"
    thinking = answer["content"][0]
    assert thinking["type"] == "thinking" and thinking["thinking"] == "Weigh it." and len(thinking["signature"]) > 40
    replay = {**ask, "messages": [*ask["messages"], {"role": "assistant", "content": answer["content"]},
                                  {"role": "user", "content": "and now?"}]}
    assert (await client.post("/v1/messages", headers=keys(alice), json=replay)).status_code == 200
    assert reasoning_chat_vendor.requests[1]["body"]["messages"][1] == {
        "role": "assistant", "content": "Done.", "reasoning_content": "Weigh it."}
    forged = [{**thinking, "thinking": "something else"}, *answer["content"][1:]]
    refused = await client.post("/v1/messages", headers=keys(alice), json={
        **replay, "messages": [*ask["messages"], {"role": "assistant", "content": forged},
                               {"role": "user", "content": "and now?"}]})
    assert refused.status_code == 400 and "signature" in refused.json()["error"]["message"]
    streamed = await client.post("/v1/messages", headers=keys(alice), json={**ask, "stream": True})
    frames = [orjson.loads(line[6:]) for line in streamed.text.splitlines() if line.startswith("data: ")]
    signature = [f["delta"]["signature"] for f in frames if f.get("delta", {}).get("type") == "signature_delta"]
    assert signature == [thinking["signature"]]
    start = frames[0]["message"]["usage"]["input_tokens"]
    assert start > 0 and frames[-2]["usage"]["input_tokens"] > 0


@pytest.mark.parametrize("display", ["summarized", "omitted"])
async def test_a_thinking_turn_of_tool_calls_goes_back_with_its_reasoning(client, alice, reasoning_chat_vendor,
                                                                          display):
    """Claude Code's loop on a chat upstream that thinks: the tool call's turn, sent back with the
    tool's result, carries the reasoning that led to it (without it DeepSeek's API refuses the call),
    also when the client had the thinking's text omitted."""
    tools = [{"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
    ask = {"model": "omicron-4-mini", "max_tokens": 200,
           "thinking": {"type": "enabled", "budget_tokens": 1024, "display": display},
           "tools": tools, "messages": [{"role": "user", "content": "weather in Oslo?"}]}
    first = (await client.post("/v1/messages", headers=keys(alice), json=ask)).json()
    assert [block["type"] for block in first["content"]] == ["thinking", "tool_use"]
    assert first["content"][0]["thinking"] == ("" if display == "omitted" else "Look it up.")
    follow = {**ask, "messages": [*ask["messages"], {"role": "assistant", "content": first["content"]},
                                  {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1",
                                                                "content": "snow"}]}]}
    second = await client.post("/v1/messages", headers=keys(alice), json=follow)
    assert second.status_code == 200 and second.json()["content"][-1] == {"type": "text", "text": "Done."}
    assert reasoning_chat_vendor.requests[-1]["body"]["messages"][1]["reasoning_content"] == "Look it up."


WEATHER = [{"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]


@pytest.fixture
async def claude_and_reasoner(settings, reasoning_chat_vendor):
    """``reasoning_chat_vendor`` for omicron-4-mini, and the sandbox's Claude for epsilon-4.5 (an
    upstream of its own: the sandbox's default one is off)."""
    await add_upstream("anthropic", settings.STUDIO_SANDBOX_BASE_URL, {"epsilon-4.5": "claude-sonnet-4-5"})
    return reasoning_chat_vendor


def _tool_result(call_id: str) -> dict:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "snow"}]}


async def test_a_loop_switched_from_the_claude_model_to_a_chat_one_goes_on(client, alice, claude_and_reasoner):
    """Claude Code's ``/model`` mid-loop, from the Claude model to a thinking chat model: Claude's
    signed thinking, which the gateway cannot check, is not refused, and its text goes upstream as
    the turn's reasoning, which such a vendor wants back (DeepSeek's refuses the turn without it)."""
    ask = {"model": "epsilon-4.5", "max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024},
           "tools": WEATHER, "messages": [{"role": "user", "content": "get_weather for Oslo"}]}
    first = (await client.post("/v1/messages", headers=keys(alice), json=ask)).json()
    assert [block["type"] for block in first["content"]] == ["thinking", "text", "tool_use"]
    follow = {**ask, "model": "omicron-4-mini", "messages": [
        *ask["messages"], {"role": "assistant", "content": first["content"]}, _tool_result(first["content"][-1]["id"])]}
    second = await client.post("/v1/messages", headers=keys(alice), json=follow)
    assert second.status_code == 200 and second.json()["content"][-1] == {"type": "text", "text": "Done."}
    assert claude_and_reasoner.requests[-1]["body"]["messages"][1]["reasoning_content"] == \
        first["content"][0]["thinking"]


@pytest.mark.parametrize("display", ["summarized", "omitted"])
async def test_a_loop_switched_from_a_chat_model_to_the_claude_one_goes_on(client, alice, claude_and_reasoner,
                                                                         display):
    """The other way: the thinking blocks the gateway signed for the chat model's reasoning are not
    sent to the vendor, which refuses a signature it did not make; the loop's step goes without
    thinking (the vendor wants its own thinking to lead a tool loop's last turn), the next question
    is thought about again."""
    ask = {"model": "omicron-4-mini", "max_tokens": 2048,
           "thinking": {"type": "enabled", "budget_tokens": 1024, "display": display},
           "tools": WEATHER, "messages": [{"role": "user", "content": "get_weather for Oslo"}]}
    first = (await client.post("/v1/messages", headers=keys(alice), json=ask)).json()
    assert [block["type"] for block in first["content"]] == ["thinking", "tool_use"]
    follow = {**ask, "model": "epsilon-4.5", "messages": [
        *ask["messages"], {"role": "assistant", "content": first["content"]}, _tool_result("call_1")]}
    second = await client.post("/v1/messages", headers=keys(alice), json=follow)
    assert second.status_code == 200, second.text
    assert [block["type"] for block in second.json()["content"]] == ["text"]
    again = {**follow, "messages": [*follow["messages"], {"role": "assistant", "content": second.json()["content"]},
                                    {"role": "user", "content": "and tomorrow?"}]}
    third = await client.post("/v1/messages", headers=keys(alice), json=again)
    assert third.status_code == 200 and third.json()["content"][0]["type"] == "thinking"


@pytest.fixture
async def hidden_reasoner(catalog):
    """omicron-4-mini as the sandbox's o4-mini: a reasoning model that never shows its reasoning,
    nor takes any back (its catalog entry: ``thinking: "hidden"``)."""
    from studio.models import PlatformModel, Upstream

    model = await PlatformModel.objects.aget(model_id="omicron-4-mini")
    model.capabilities = {**model.capabilities, "thinking": "hidden"}
    await model.asave()
    sandbox = await Upstream.objects.aget(name="Sandbox")
    sandbox.model_map = {**sandbox.model_map, "omicron-4-mini": "o4-mini"}
    await sandbox.asave()


async def test_a_loop_switched_from_the_claude_model_to_a_hidden_reasoner_goes_on(client, alice, hidden_reasoner):
    """To OpenAI's reasoning models, neither a messages nor a chat client's conversation brings
    Claude's reasoning (the vendor refuses ``reasoning_content`` as an unknown parameter); the ask
    to think goes all the same."""
    ask = {"model": "epsilon-4.5", "max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024},
           "tools": WEATHER, "messages": [{"role": "user", "content": "get_weather for Oslo"}]}
    first = (await client.post("/v1/messages", headers=keys(alice), json=ask)).json()
    follow = {**ask, "model": "omicron-4-mini", "messages": [
        *ask["messages"], {"role": "assistant", "content": first["content"]}, _tool_result(first["content"][-1]["id"])]}
    second = await client.post("/v1/messages", headers=keys(alice), json=follow)
    assert second.status_code == 200, second.text
    assert second.json()["content"][-1] == {"type": "text", "text": "The tool get_weather returned: snow"}
    bearer = {"Authorization": f"Bearer {alice.secret}"}
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER[0]["input_schema"]}}]
    chat = {"model": "epsilon-4.5", "tools": tools, "reasoning_effort": "low",
            "messages": [{"role": "user", "content": "get_weather for Oslo"}]}
    message = (await client.post("/v1/chat/completions", headers=bearer, json=chat)).json()["choices"][0]["message"]
    assert message["reasoning_content"] and message["thinking_blocks"]
    switched = await client.post("/v1/chat/completions", headers=bearer, json={**chat, "model": "omicron-4-mini", "messages": [
        *chat["messages"], message, {"role": "tool", "tool_call_id": message["tool_calls"][0]["id"], "content": "snow"}]})
    assert switched.status_code == 200, switched.text
    assert switched.json()["choices"][0]["message"]["content"] == "The tool get_weather returned: snow"
    assert switched.json()["usage"]["completion_tokens_details"]["reasoning_tokens"] > 0  # it thought


PDF = base64.b64encode(b"%PDF-1.4 one page").decode()


async def test_a_document_reaches_a_chat_upstream_as_a_file(client, alice, reasoning_chat_vendor):
    answer = await client.post("/v1/messages", headers=keys(alice), json={
        "model": "omicron-4-mini", "max_tokens": 50, "messages": [{"role": "user", "content": [
            {"type": "document", "title": "a.pdf", "source": {"type": "base64", "media_type": "application/pdf",
                                                             "data": PDF}},
            {"type": "text", "text": "summarize this"}]}]})
    assert answer.status_code == 200
    assert reasoning_chat_vendor.requests[-1]["body"]["messages"][0]["content"] == [
        {"type": "file", "file": {"filename": "a.pdf", "file_data": f"data:application/pdf;base64,{PDF}"}},
        {"type": "text", "text": "summarize this"}]


async def test_a_chat_clients_pdf_reaches_a_messages_upstream_as_a_document(client, alice, anthropic_vendor):
    anthropic_vendor.answer = lambda request: json_answer(
        {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-vendor",
         "content": [{"type": "text", "text": "A page."}], "stop_reason": "end_turn", "stop_sequence": None,
         "usage": {"input_tokens": 7, "output_tokens": 2}})
    answer = await client.post("/v1/chat/completions", headers={"Authorization": f"Bearer {alice.secret}"}, json={
        "model": "epsilon-4.5", "messages": [{"role": "user", "content": [
            {"type": "text", "text": "summarize this"},
            {"type": "file", "file": {"filename": "a.pdf", "file_data": f"data:application/pdf;base64,{PDF}"}}]}]})
    assert answer.json()["choices"][0]["message"]["content"] == "A page."
    assert anthropic_vendor.requests[-1]["body"]["messages"][0]["content"] == [
        {"type": "text", "text": "summarize this"},
        {"type": "document", "title": "a.pdf", "source": {"type": "base64", "media_type": "application/pdf",
                                                          "data": PDF}}]
