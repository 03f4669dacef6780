"""Serve the sandbox vendor cloud on a port: a realistic offline upstream for tools and benchmarks."""

from __future__ import annotations

import uvicorn
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Serve the sandbox vendor cloud (every vendor protocol of the provider registry)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8900)

    def handle(self, *args, **options) -> None:
        self.stdout.write(f"Sandbox vendor cloud: http://{options['host']}:{options['port']}/")
        uvicorn.run("studio.sandbox.app:application", host=options["host"], port=options["port"], log_level="warning")
