"""A webhook receiver on a loopback port, for the tests of signed webhooks."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable


class Hook:
    """A loopback web server standing in for a webhook receiver: it keeps each POST (headers and
    body) and answers 204, or 503 to the first ``fail_first`` ones. ``on_post`` runs (in the
    server's thread) as each POST arrives, before the answer."""

    def __init__(self, fail_first: int = 0, on_post: Callable[[], None] | None = None) -> None:
        self.received: list[tuple[dict, bytes]] = []
        self.fail_first = fail_first
        self.on_post = on_post
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if hook.on_post is not None:
                    hook.on_post()
                if hook.fail_first:
                    hook.fail_first -= 1
                    self.send_response(503)
                else:
                    hook.received.append((dict(self.headers), body))
                    self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
