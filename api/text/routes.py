"""The text family's routers: each handler with its path, documented body and summary.

The handlers (``chat``, ``messages``, ``responses``) import neither ninja nor the Schemas, so the
hottest of them can be served directly (``api.direct``) by a process that never loads either.
"""

from __future__ import annotations

from api.errors import MESSAGES, OPENAI
from api.openapi import BEARER, MESSAGES_KEYS, body_doc
from api.routing import FamilyRouter
from api.text import chat, messages, responses
from api.text.schemas import (
                 ChatCompletionRequest,
                 MessagesCountTokensRequest,
                 MessagesRequest,
                 ResponsesRequest,
)

chat_router = FamilyRouter(OPENAI, security=BEARER, tags=["text"])
chat_router.post("/chat/completions", openapi_extra=body_doc(json=ChatCompletionRequest),
                 summary="Chat completions")(chat.chat_completions)

messages_router = FamilyRouter(MESSAGES, security=MESSAGES_KEYS, tags=["text"])
messages_router.post("/messages", openapi_extra=body_doc(json=MessagesRequest), summary="Messages")(messages.messages)
messages_router.post("/messages/count_tokens", openapi_extra=body_doc(json=MessagesCountTokensRequest),
                     summary="Count a messages request's input tokens")(messages.count_tokens)

responses_router = FamilyRouter(OPENAI, security=BEARER, tags=["text"])
responses_router.post("/responses", openapi_extra=body_doc(json=ResponsesRequest),
                      summary="Responses")(responses.responses)
responses_router.get("/responses/{response_id}", summary="Retrieve a stored response")(responses.retrieve_response)
responses_router.delete("/responses/{response_id}", summary="Delete a stored response")(responses.delete_response)
responses_router.get("/responses/{response_id}/input_items",
                     summary="List a stored response's input items")(responses.list_input_items)
