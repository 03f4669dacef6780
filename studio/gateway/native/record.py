"""The record of one native image call, built during the call and persisted off the hot path."""

from __future__ import annotations

import base64
import binascii
import json
import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import orjson

from studio.core import content_hash
from studio.core.errors import GatewayError, UnreadableAnswer
from studio.core.principal import Principal
from studio.gateway import recording
from studio.gateway.admission import Ticket
from studio.gateway.cost import ZERO, Usage, display
from studio.gateway.native.frames import LongString, PassedFrame, parse_frame
from studio.gateway.native.result import NativeResult, cached_count, inline_data, prompt_of, usage_counts

if TYPE_CHECKING:
    from studio.gateway.media.generation_rows import Rows


@dataclass(slots=True)
class NativeRecord(recording.TimedRecord):
    principal: Principal
    model_id: str
    route: str
    body: dict[str, Any]
    stream: bool
    generation_id: uuid.UUID = field(default_factory=uuid.uuid4)
    upstream_id: int | None = None
    started_wall: float = field(default_factory=time.time)
    started: float = field(default_factory=time.perf_counter)
    first_byte_ms: int | None = None
    duration_ms: int | None = None
    frames: list[bytes | bytearray | PassedFrame] = field(default_factory=list)
    error: GatewayError | None = None
    # Set by the studio when it stores outputs itself as they stream (part index → asset id).
    stored_outputs: dict[int, uuid.UUID] = field(default_factory=dict)
    preexisting: bool = False
    submitted: bool = False
    ticket: Ticket | None = None
    cost_usd: Decimal = ZERO
    merged: NativeResult | None = field(default=None, repr=False, compare=False)  # ``result()``, once made

    @classmethod
    def start(cls, principal: Principal, model_id: str, route: str, body: dict[str, Any], *, stream: bool) -> NativeRecord:
        return cls(principal=principal, model_id=model_id, route=route, body=body, stream=stream)

    def add_frame(self, frame: bytes | bytearray | PassedFrame) -> None:
        self.frames.append(frame)

    def counted(self) -> Usage:
        """Tokens from the answer's ``usageMetadata`` (native images are billed as tokens), and
        the images made, counted as the generation's record counts them."""
        result = self.result()
        return billed(result.usage, images=len(result.final_images()))

    def charge(self) -> None:
        if self.ticket is not None:
            self.cost_usd = self.ticket.charge(None if self.error is not None else self.counted(), self.upstream_id)

    def check_usage(self) -> None:
        """Raise ``UnreadableAnswer`` when the answer's usage holds a count that is not one; the
        usage is then set aside, so the failed call's record can still be written."""
        result = self.result()
        try:
            billed(result.usage)
        except UnreadableAnswer:
            result.usage = {}
            raise

    def pending_bytes(self) -> int:
        return sum(len(frame) for frame in self.frames)

    def result(self) -> NativeResult:
        """The answer merged from every frame (once: charging counts its images, the recorder
        stores them); images stay inside their frames until decoded."""
        if self.merged is not None:
            return self.merged
        result = NativeResult()
        for frame in self.frames:
            try:
                chunk = parse_frame(frame)
            except orjson.JSONDecodeError:
                continue
            if isinstance(chunk, dict):
                result.add(chunk)
        self.merged = result
        return result

    # -- persisted in the recorder's worker thread -------------------------------------------------
    def persist(self) -> None:
        self.persist_batch([self])

    @classmethod
    def persist_batch(cls, records: list[NativeRecord]) -> None:
        """The batch's rows in a few statements (``generation_rows.persist``)."""
        from studio.gateway.media import generation_rows

        generation_rows.persist(records)

    def gather(self, rows: Rows) -> None:
        """This record's rows: its generation's (or the update of the one a studio job made), its
        final pictures' (their files written) and its usage's."""
        from studio.gateway.media.storage import Base64Content, store_base64, store_bytes
        from studio.models import Generation, GenerationStatus

        result = self.result()
        finals = result.final_images()
        if self.error is not None:
            status = GenerationStatus.FAILED
        elif finals:
            status = GenerationStatus.SUCCEEDED
        else:
            status = GenerationStatus.BLOCKED
        principal = self.principal
        values = dict(
            user_id=principal.user_id, api_key_id=principal.key_id, team_id=principal.team_id,
            model_id=self.model_id, upstream_id=self.upstream_id, route=self.route, cost_usd=self.cost_usd,
            prompt=prompt_of(self.body)[:10000], parameters=self.parameters(), status=status,
            finish_reason=(result.finish_reason if finals else result.block_reason) if self.error is None else "",
            text=result.text[:20000], usage=result.usage, error=self.error_dict(),
            first_byte_ms=self.first_byte_ms, duration_ms=self.duration_ms,
            parent_id=self.parent_generation_id(),
        )
        if self.preexisting:
            Generation.objects.filter(id=self.generation_id).update(**values)
        else:  # a row, not a model instance: nothing here needs more than its id
            rows.generations.append({
                "id": self.generation_id, "started_at": datetime.fromtimestamp(self.started_wall, UTC), **values,
            })
        for index, image in enumerate(finals):
            if image.part_index in self.stored_outputs:
                continue
            where = dict(owner_id=principal.user_id, team_id=principal.team_id, generation_id=self.generation_id,
                         index=index, metadata={"part_index": image.part_index}, defer=rows.pictures)
            try:
                if isinstance(image.data, LongString):  # decoded from the frame into the file, a piece at a time
                    store_base64(image.data.pieces(Base64Content.PIECE), image.decode, image.mime, **where)
                else:
                    store_bytes(image.decode(), image.mime, **where)
            except GatewayError:
                continue
        self.store_inputs(self.generation_id)
        prompt_tokens, output_tokens, total = usage_counts(result.usage)
        rows.usage.append(dict(
            api_key_id=principal.key_id, user_id=principal.user_id, team_id=principal.team_id,
            model_id=self.model_id, upstream_id=self.upstream_id, route=self.route,
            status_code=self.error.status if self.error else 200, cost_usd=self.cost_usd,
            cached_tokens=cached_count(result.usage),
            input_tokens=prompt_tokens, output_tokens=output_tokens, total_tokens=total, images=len(finals),
            latency_ms=self.duration_ms, first_byte_ms=self.first_byte_ms,
        ))

    def release(self) -> None:
        self.frames, self.merged = [], None

    def parameters(self) -> dict[str, Any]:
        params = {k: v for k, v in self.body.items() if k != "contents"}
        params["stream"] = self.stream
        params["turns"] = len(self.body.get("contents") or [])
        return params

    def error_dict(self) -> dict[str, Any]:
        if self.error is None:
            return {}
        return {"status": self.error.status, "message": self.error.message, "code": self.error.code or ""}

    def _user_images(self) -> list[tuple[str, str]]:
        contents = self.body.get("contents") or []
        last_user = next((c for c in reversed(contents) if isinstance(c, dict) and c.get("role", "user") == "user"), None)
        images = []
        for part in (last_user or {}).get("parts") or []:
            inline = inline_data(part) if isinstance(part, dict) else None
            if inline:
                images.append((str(inline.get("mimeType") or inline.get("mime_type") or ""), str(inline.get("data") or "")))
        return images

    def store_inputs(self, generation_id: uuid.UUID) -> None:
        from studio.gateway.media.storage import store_bytes

        for mime, data_b64 in self._user_images():
            try:
                data = base64.b64decode(data_b64)
            except (binascii.Error, ValueError):
                continue
            asset = store_bytes(data, mime or "image/png", owner_id=self.principal.user_id,
                                team_id=self.principal.team_id, is_input=True, dedupe=True)
            asset.metadata = {**asset.metadata, "input_of": [*asset.metadata.get("input_of", []), str(generation_id)]}
            asset.save(update_fields=["metadata"])

    def parent_generation_id(self) -> uuid.UUID | None:
        """Lineage of a multi-turn edit: the generation that made the replayed model image."""
        from studio.gateway.media.storage import hashes_of
        from studio.models import Asset

        for content in reversed(self.body.get("contents") or []):
            if not isinstance(content, dict) or content.get("role") != "model":
                continue
            for part in reversed(content.get("parts") or []):
                inline = inline_data(part) if isinstance(part, dict) else None
                if inline and not part.get("thought"):
                    try:
                        data = base64.b64decode(str(inline.get("data") or ""))
                    except (binascii.Error, ValueError):
                        return None
                    asset = Asset.objects.filter(owner_id=self.principal.user_id,
                                                 content_hash__in=hashes_of(data, content_hash.of(data)),
                                                 generation__isnull=False).only("generation_id").first()
                    return asset.generation_id if asset else None
            return None
        return None


_USAGE_KEY = re.compile(rb'"usageMetadata"\s*:\s*\{')
_FINISH_KEY = b'"finishReason"'
USAGE_TAIL = 16 * 1024


def usage_in(frame: bytes | bytearray) -> dict[str, Any]:
    """The ``usageMetadata`` of a stream's final frame, read from the frame's tail only: a 20 MB
    image frame is not parsed on the response path to learn its token counts."""
    tail = bytes(memoryview(frame)[max(len(frame) - USAGE_TAIL, 0):])
    matches = list(_USAGE_KEY.finditer(tail))
    if not matches:
        return {}
    try:
        value, _ = json.JSONDecoder().raw_decode(tail[matches[-1].end() - 1:].decode("utf-8", "replace"))
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def billed(usage: dict[str, Any], images: int = 0) -> Usage:
    """What a ``usageMetadata`` object bills: prompt, output (everything past the prompt) and cached
    tokens; ``images`` made are billed within the output tokens."""
    prompt, output, _ = usage_counts(usage)
    return Usage(input_tokens=prompt, output_tokens=output, cached_tokens=cached_count(usage),
                 token_images=images)


def final_usage_at(frame: bytes | bytearray) -> int | None:
    """In a stream's final frame (the one whose candidate has its ``finishReason``), the offset
    just inside its ``usageMetadata`` object; None for any other frame. Only the frame's tail is
    searched, as in ``usage_in``."""
    start = max(len(frame) - USAGE_TAIL, 0)
    if frame.find(_FINISH_KEY, start) < 0:
        return None
    matches = list(_USAGE_KEY.finditer(memoryview(frame)[start:]))
    return start + matches[-1].end() if matches else None


def with_cost(frame: bytes | bytearray, at: int, cost: Decimal) -> bytes | bytearray:
    """``frame`` with ``"costUsd": <US dollars>`` as the first member of the ``usageMetadata`` that
    opens at ``at``. A big frame (a ``bytearray``) is changed in place rather than copied."""
    empty = bytes(frame[at:at + 64]).lstrip().startswith(b"}")
    piece = b'"costUsd":' + display(cost).encode() + (b"" if empty else b",")
    if isinstance(frame, bytearray):
        frame[at:at] = piece
        return frame
    return frame[:at] + piece + frame[at:]
