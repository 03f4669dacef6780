"""``/v1/docs`` works offline, and ``/v1/openapi.json`` documents every route's body and key."""

from __future__ import annotations

import json
import re

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

OPERATIONS = {
    ("post", "/v1/models/{model}:generateContent"): (["application/json"], "GenerateContentRequest"),
    ("post", "/v1/models/{model}:streamGenerateContent"): (["application/json"], "GenerateContentRequest"),
    ("post", "/v1/images/generations"): (["application/json"], "ImageGenerationRequest"),
    ("post", "/v1/images/edits"): (["application/json", "multipart/form-data"], "ImageEditRequest"),
    ("post", "/v1/files"): (["multipart/form-data"], "FileUploadForm"),
    ("post", "/v1/chat/completions"): (["application/json"], "ChatCompletionRequest"),
    ("post", "/v1/messages"): (["application/json"], "MessagesRequest"),
    ("post", "/v1/responses"): (["application/json"], "ResponsesRequest"),
    ("post", "/v1/messages/count_tokens"): (["application/json"], "MessagesCountTokensRequest"),
    ("get", "/v1/responses/{response_id}"): ([], None),
    ("delete", "/v1/responses/{response_id}"): ([], None),
    ("get", "/v1/responses/{response_id}/input_items"): ([], None),
    ("post", "/v1/alpha/video/generations"): (["application/json"], "ArkVideoRequest"),
    ("post", "/v1/beta/video/generations"): (["application/json"], "DashScopeVideoRequest"),
    ("post", "/v1/video/generations"): (["application/json"], "GenericVideoRequest"),
    ("get", "/v1/models"): ([], None),
    ("get", "/v1/models/{model}"): ([], None),
    ("get", "/v1/alpha/video/generations/{task_id}"): ([], None),
    ("get", "/v1/beta/video/generations/{task_id}"): ([], None),
    ("get", "/v1/video/generations/{task_id}"): ([], None),
    ("get", "/v1/alpha/video/generations"): ([], None),
    ("delete", "/v1/alpha/video/generations/{task_id}"): ([], None),
    ("post", "/v1/beta/video/generations/{task_id}/cancel"): ([], None),
    ("post", "/v1/video/generations/{task_id}/cancel"): ([], None),
    ("post", "/v1/models/{model}:countTokens"): (["application/json"], "CountTokensRequest"),
    ("post", "/v1/models/{model}:embedContent"): (["application/json"], "EmbedContentRequest"),
    ("post", "/v1/models/{model}:batchEmbedContents"): (["application/json"], "BatchEmbedContentsRequest"),
    ("post", "/v1/embeddings"): (["application/json"], "EmbeddingRequest"),
}
NATIVE_KEYS = {"x-delta-api-key", "x-goog-api-key", "key", "bearer"}
SECURITY = {"/v1/messages": {"x-api-key", "bearer"}, "/v1/messages/count_tokens": {"x-api-key", "bearer"},
            "/v1/models": {"bearer", "x-api-key"}, "/v1/models/{model}": {"bearer", "x-api-key"},
            **{f"/v1/models/{{model}}:{method}": NATIVE_KEYS for method in (
                "generateContent", "streamGenerateContent", "countTokens", "embedContent", "batchEmbedContents")}}


async def test_docs_page_uses_only_local_assets_that_answer(client):
    page = await client.get("/v1/docs")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assets = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert any(a.endswith("swagger-ui-bundle.js") for a in assets)
    assert any(a.endswith("swagger-ui.css") for a in assets)
    for url in assets:
        assert url.startswith("/") and not url.startswith("//"), url
        asset = await client.get(url)
        assert asset.status_code == 200, url
        assert len(asset.content) > 100, url
    settings = json.loads(re.search(r'id="swagger-settings">(.*?)</script>', page.text, re.S).group(1))
    assert settings["url"] == "/v1/openapi.json" and settings["validatorUrl"] is None
    assert "cdn" not in page.text.lower() and "https://" not in page.text


async def test_openapi_lists_every_route_with_its_body_and_key(client):
    response = await client.get("/v1/openapi.json")
    assert response.status_code == 200
    document = response.json()
    schemas, schemes = document["components"]["schemas"], document["components"]["securitySchemes"]
    assert schemes["bearer"] == {"type": "http", "scheme": "bearer", "description": schemes["bearer"]["description"]}
    assert (schemes["x-api-key"]["in"], schemes["x-api-key"]["name"]) == ("header", "x-api-key")
    assert (schemes["key"]["in"], schemes["key"]["name"]) == ("query", "key")
    listed = {(method, path) for path, ops in document["paths"].items() for method in ops}
    assert listed == set(OPERATIONS)
    for (method, path), (media, schema) in OPERATIONS.items():
        operation = document["paths"][path][method]
        security = {name for requirement in operation["security"] for name in requirement}
        assert security == SECURITY.get(path, {"bearer"}), path
        assert security <= set(schemes)
        content = operation.get("requestBody", {}).get("content", {})
        assert sorted(content) == media, path
        if schema:
            ref = content[media[0]]["schema"]["$ref"]
            assert ref == f"#/components/schemas/{schema}"
            assert {"model", "contents", "file", "requests"} & set(schemas[schema]["properties"]), schema
    # Nested models are documented too, and every reference resolves.
    for ref in re.findall(r'"\$ref":\s*"#/components/schemas/([^"]+)"', response.text):
        assert ref in schemas, ref
    assert schemas["ImageEditForm"]["properties"]["image"]["items"]["format"] == "binary"
    assert set(schemas["ChatCompletionRequest"]["required"]) == {"model", "messages"}
    assert set(schemas["MessagesRequest"]["required"]) == {"model", "messages", "max_tokens"}
