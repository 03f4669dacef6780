from django.contrib import admin
from django.urls import include, path, re_path

from api.v1 import api, beta, not_found
from studio.web.ops_views import metrics_view, readyz
from studio.web.public_media import public_media

urlpatterns = [
    path("v1/", not_found),  # before the API's own root, which would answer with the HTML 404 page
    path("v1/", api.urls),
    re_path(r"^v1(?:/(?P<rest>.*))?$", not_found),  # unknown /v1 addresses: JSON, never HTML
    path("v1beta/", beta.urls),  # the native family under the Gemini API's version
    re_path(r"^v1beta(?:/(?P<rest>.*))?$", not_found),
    path("m/<str:token>", public_media, name="public-media"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    path("", include("studio.web.urls")),
]
