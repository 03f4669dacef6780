from django.urls import path

from studio.realtime.consumers import StudioConsumer

websocket_urlpatterns = [
    path("ws/studio/", StudioConsumer.as_asgi()),
]
