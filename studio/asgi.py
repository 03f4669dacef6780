"""ASGI entry point: ``uvicorn studio.asgi:application`` alone is a complete server.

http → Django (/v1 on the lean API handler), websocket → studio.realtime, lifespan → the
in-process background worker.
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

studio_http = get_asgi_application()  # sets Django up before anything imports models

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from studio.realtime.routing import websocket_urlpatterns  # noqa: E402
from studio.serving import ApiASGIHandler, HttpDispatcher, Lifespan  # noqa: E402

application = ProtocolTypeRouter({
    "http": HttpDispatcher(api=ApiASGIHandler(), studio=studio_http),
    "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    "lifespan": Lifespan(),
})
