"""``/v1/docs``: Swagger UI from our own static files (``static/vendor/swagger-ui``), no CDN."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from ninja import NinjaAPI
from ninja.openapi.docs import DocsBase

SETTINGS = {
    "layout": "BaseLayout",
    "deepLinking": True,
    # Swagger UI otherwise loads a badge from the public validator service.
    "validatorUrl": None,
}


class OfflineSwagger(DocsBase):
    template = "api/docs.html"

    def render_page(self, request: HttpRequest, api: NinjaAPI, **kwargs: Any) -> HttpResponse:
        settings = {**SETTINGS, "url": self.get_openapi_url(api, kwargs)}
        # ``</`` cannot end the JSON's <script> element early.
        payload = json.dumps(settings).replace("</", "<\\/")
        return render(request, self.template, {"api": api, "swagger_settings": payload})
