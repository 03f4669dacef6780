"""Every field of a valid request, in turn, given a value of each other JSON type (or left out):
the answer is a 4xx in the family's error body, or a 2xx where the vendor takes that value too,
never a 5xx. The schema-driven fuzz (``test_fuzz``) draws bodies the schema describes; this walks
the nested fields real clients send (tool calls, tool results, content parts, embed requests),
where a value of the wrong type reaches code that expected a string or a list."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from tests.fault import tally
from tests.fault.conftest import family_of, is_family_error
from tests.wrong_values import PNG, chat_body, variants

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.fault]


BODIES: dict[str, dict[str, Any]] = {
    "/v1/chat/completions": chat_body("omicron-4-mini"),
    "/v1/messages": {
        "model": "omicron-4-mini", "max_tokens": 20, "system": [{"type": "text", "text": "be brief"}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image", "source": {
                "type": "base64", "media_type": "image/png", "data": PNG}}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "done"}]}],
        "tools": [{"name": "f", "input_schema": {"type": "object"}}], "tool_choice": {"type": "tool", "name": "f"},
        "stop_sequences": ["END"]},
    "/v1/messages/count_tokens": {
        "model": "omicron-4-mini", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]},
    "/v1/responses": {
        "model": "omicron-4-mini", "instructions": "be brief", "max_output_tokens": 64, "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "done"}],
        "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}],
        "tool_choice": {"type": "function", "name": "f"}, "text": {"format": {"type": "text"}}},
    "/v1/embeddings": {"model": "omicron-embed-3-small", "input": ["a", "b"], "dimensions": 8},
    "/v1/models/delta-embedding-1:embedContent": {
        "content": {"parts": [{"text": "a"}]}, "outputDimensionality": 128, "taskType": "RETRIEVAL_QUERY"},
    "/v1/models/delta-embedding-1:batchEmbedContents": {"requests": [{
        "model": "models/delta-embedding-1", "content": {"parts": [{"text": "a"}]}, "taskType": "RETRIEVAL_QUERY",
        "title": "t"}]},
    "/v1/models/delta-3.1-flash-image:countTokens": {
        "contents": [{"role": "user", "parts": [{"text": "a"}, {"inlineData": {"mimeType": "image/png", "data": PNG}}]}]},
    "/v1beta/models/delta-3.1-flash-image:countTokens": {
        "generateContentRequest": {"model": "models/delta-3.1-flash-image", "contents": [{"parts": [{"text": "a"}]}]}},
}
# A video route's accepted variants each start a render: only its media items are varied.
MEDIA_ONLY = {"/v1/beta/video/generations": {
    "model": "beta2.7-i2v", "input": {"prompt": "a lantern", "media": [
        {"type": "first_frame", "url": f"data:image/png;base64,{PNG}"}]}}}


CASES = [(route, body, ()) for route, body in BODIES.items()] + \
    [(route, body, ("input", "media")) for route, body in MEDIA_ONLY.items()]


@pytest.mark.parametrize(("route", "body", "under"), CASES, ids=[route for route, _, _ in CASES])
async def test_a_field_of_the_wrong_type_gets_the_family_error_never_a_5xx(client, alice, route, body, under):
    family = family_of(route.replace("/v1beta/", "/v1/"))
    headers = {"Authorization": f"Bearer {alice.secret}", "x-api-key": alice.secret,
               "anthropic-version": "2023-06-01", "Content-Type": "application/json"}
    assert (await client.post(route, content=orjson.dumps(body), headers=headers)).status_code == 200
    failures = []
    for change, variant in variants(body, under):
        response = await client.post(route, content=orjson.dumps(variant), headers=headers)
        tally.add("requests tried")
        if response.status_code >= 500:
            tally.add("unexpected 5xx")
            failures.append(f"{change}: {response.status_code} {response.text[:200]}")
        elif response.status_code >= 400 and not is_family_error(family, response.json()):
            failures.append(f"{change}: {response.status_code} without the family's error body: {response.text[:200]}")
    assert not failures, "\n".join(failures)
