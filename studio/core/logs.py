"""Log formatting (one JSON object per line, ``STUDIO_LOG_FORMAT=json``) and the request log's
batched writer."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

import orjson

# Attributes every LogRecord has; anything else was passed with ``extra=`` and is kept.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """``{"time", "level", "logger", "message", ...extra, "exc_info"}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name, value in vars(record).items():
            if name not in _STANDARD and not name.startswith("_"):
                entry[name] = value
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack_info"] = self.formatStack(record.stack_info)
        return orjson.dumps(entry, default=str).decode()


class MessageFormatter(logging.Formatter):
    """The message as it is (the request log's lines are JSON already)."""

    def format(self, record: logging.LogRecord) -> str:
        return record.getMessage()


class BatchedLineHandler(logging.StreamHandler):
    """A ``StreamHandler`` that, in an event loop's thread, writes its lines in batches.

    The request log writes a line per request; written one by one, each line is a ``write``
    system call, the costliest step of the line. In the event loop's thread the formatted
    lines are kept and written together ``delay`` seconds after the first of them (or as soon
    as ``max_bytes`` are waiting), in one call. Elsewhere (a thread, a management command)
    a line is written at once. ``flush`` writes what is waiting; ``logging.shutdown`` calls it
    at exit. What a process killed outright was still holding (``delay`` seconds of lines at
    most) is lost.
    """

    def __init__(self, stream=None, delay: float = 0.05, max_bytes: int = 64 * 1024) -> None:
        super().__init__(stream)
        self.delay, self.max_bytes = delay, max_bytes
        self._lines: list[str] = []
        self._size = 0
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None

    def emit(self, record: logging.LogRecord) -> None:
        loop = asyncio._get_running_loop()
        if loop is None:
            self.flush()  # keep the order: what was waiting goes first
            super().emit(record)
            return
        try:
            line = self.format(record)
        except Exception:
            self.handleError(record)
            return
        self._keep(line, loop)

    def write_line(self, line: str) -> None:
        """What ``handle`` of a record whose formatted text is ``line`` writes, without making the
        record: for a caller that knows this handler has no filters and writes messages as they are."""
        with self.lock:
            loop = asyncio._get_running_loop()
            if loop is not None:
                self._keep(line, loop)
                return
            self.flush()
            try:
                self.stream.write(line + self.terminator)
                self.stream.flush()
            except Exception:
                logging.Handler.handleError(self, logging.makeLogRecord({"msg": line}))

    def _keep(self, line: str, loop: asyncio.AbstractEventLoop) -> None:
        """Keep ``line`` for the next batch (in ``loop``'s thread)."""
        line += self.terminator
        self._lines.append(line)
        self._size += len(line)
        if self._size >= self.max_bytes:
            self.flush()
        elif self._timer_loop is None or self._timer_loop.is_closed():  # no write due on a live loop
            self._timer, self._timer_loop = loop.call_later(self.delay, self.flush), loop

    def flush(self) -> None:
        with self.lock:
            if self._timer is not None and self._timer_loop is asyncio._get_running_loop():
                self._timer.cancel()  # (a timer of another thread's loop just finds nothing to write)
            self._timer = self._timer_loop = None
            if self._lines:
                text, self._lines, self._size = "".join(self._lines), [], 0
                try:
                    self.stream.write(text)
                except Exception:
                    logging.Handler.handleError(self, logging.makeLogRecord({"msg": text}))
            super().flush()
