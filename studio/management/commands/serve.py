"""Serve the studio and the gateway with uvicorn (background worker in the same process)."""

from __future__ import annotations

import uvicorn
from django.conf import settings
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Serve the studio on 127.0.0.1:PORT with the in-process background worker."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=settings.PORT)
        parser.add_argument("--workers", type=int, default=1)

    def handle(self, *args, **options) -> None:
        url = f"http://{options['host']}:{options['port']}/"
        self.stdout.write(f"Studio: {url}  (API: {url}v1/, docs: {url}v1/docs)")
        self.stdout.flush()
        uvicorn.run(
            "studio.asgi:application", host=options["host"], port=options["port"], workers=options["workers"],
            lifespan="on", log_level="info", proxy_headers=True,
            # No "server: uvicorn" on every answer: it names the stack to every caller for nothing.
            server_header=False,
            # JSON logs: keep the LOGGING settings' formatters instead of uvicorn's own.
            **({"log_config": None} if settings.STUDIO_LOG_FORMAT == "json" else {}),
        )
