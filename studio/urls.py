from django.contrib import admin
from django.urls import include, path, re_path

from api.v1 import api, not_found
from studio.web.public_media import public_media

urlpatterns = [
    path("v1/", api.urls),
    re_path(r"^v1/(?P<rest>.*)$", not_found),
    path("m/<str:token>", public_media, name="public-media"),
    path("admin/", admin.site.urls),
    path("", include("studio.web.urls")),
]
