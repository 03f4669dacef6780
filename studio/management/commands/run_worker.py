"""Run the background worker in a process of its own (the web process can then set
STUDIO_INPROCESS_WORKER=0)."""

from __future__ import annotations

import asyncio
import signal

from django.core.management.base import BaseCommand

from studio.gateway import metrics
from studio.workers.runner import run_forever


class Command(BaseCommand):
    help = "Run the background worker loop until interrupted."

    def handle(self, *args, **options) -> None:
        async def main() -> None:
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)
            self.stdout.write("worker running; Ctrl+C to stop")
            try:
                await run_forever(stop)
            finally:
                metrics.process_exited()

        asyncio.run(main())
