from django.contrib.auth import views as auth_views
from django.urls import include, path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("login/", auth_views.LoginView.as_view(template_name="studio/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("generate/", views.generate, name="generate"),
    path("gallery/", views.gallery, name="gallery"),
    path("assets/<uuid:asset_id>/file", views.asset_file, name="asset-file"),
    path("video/", include("studio.web.video_views")),
]
