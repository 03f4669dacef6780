"""The usage record of one text call: built during the call, persisted off the response path.

Token counts come from the upstream's own usage (the final chunk or event when streamed), read
in the upstream's format by ``text_usage``. A stream the client left is recorded with status 499
(``ClientClosedRequest``) and the usage of what it had been sent.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, ClassVar

from studio.core.errors import ClientClosedRequest, GatewayError
from studio.core.principal import Principal
from studio.gateway import recording, row_writes
from studio.gateway.admission import Ticket
from studio.gateway.cost import ZERO, Usage


@dataclass(slots=True)
class TextRecord(recording.TimedRecord):
    """A /v1 text or embeddings call's usage row: its answer never waits for it, nor reads it back."""

    patient: ClassVar[bool] = True
    principal: Principal
    model_id: str
    route: str
    stream: bool
    upstream_id: int | None = None
    started: float = field(default_factory=time.perf_counter)
    first_byte_ms: int | None = None
    duration_ms: int | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    error: GatewayError | None = None
    submitted: bool = False
    ticket: Ticket | None = None
    cost_usd: Decimal = ZERO

    def usage(self, input_tokens: int, output_tokens: int, cached_tokens: int = 0) -> None:
        self.input_tokens, self.output_tokens, self.cached_tokens = input_tokens, output_tokens, cached_tokens

    def counted(self) -> Usage:
        return Usage(input_tokens=self.input_tokens, output_tokens=self.output_tokens,
                     cached_tokens=self.cached_tokens)

    def billable(self) -> bool:
        """A call that succeeded, or a stream the client cut after it had been sent something
        (status 499: charged for what was sent); a failed call costs nothing."""
        if isinstance(self.error, ClientClosedRequest):
            return self.first_byte_ms is not None
        return self.error is None

    def charge(self) -> None:
        if self.ticket is not None:
            self.cost_usd = self.ticket.charge(self.counted() if self.billable() else None, self.upstream_id)

    def usage_values(self) -> dict[str, Any]:
        """The call's ``UsageRecord`` row, by field attname."""
        principal = self.principal
        return {
            "api_key_id": principal.key_id, "user_id": principal.user_id, "team_id": principal.team_id,
            "model_id": self.model_id, "upstream_id": self.upstream_id, "route": self.route,
            "status_code": self.error.status if self.error else 200, "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens, "total_tokens": self.input_tokens + self.output_tokens,
            "cached_tokens": self.cached_tokens, "cost_usd": self.cost_usd, "latency_ms": self.duration_ms,
            "first_byte_ms": self.first_byte_ms,
        }

    def usage_row(self):
        from studio.models import UsageRecord

        return UsageRecord(**self.usage_values())

    def persist(self) -> None:
        self.persist_batch([self])

    @classmethod
    def persist_batch(cls, records: list[TextRecord]) -> None:
        """One INSERT statement for the batch and one UPDATE of last use per key."""
        from studio.models import UsageRecord

        row_writes.insert_rows(UsageRecord, [r.usage_values() for r in records])
        row_writes.touch_keys({r.principal.key_id for r in records if r.principal.key_id is not None})
