"""The record of one native image call, built during the call and persisted off the hot path."""

from __future__ import annotations

import base64
import binascii
import hashlib
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from django.db import transaction
from django.utils import timezone

from . import recording
from .errors import GatewayError
from .native_frames import parse_frame
from .native_result import NativeResult, inline_data, prompt_of, usage_counts
from .principal import Principal


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
    frames: list[bytes] = field(default_factory=list)
    error: GatewayError | None = None
    # Set by the studio when it stores outputs itself as they stream (part index → asset id).
    stored_outputs: dict[int, uuid.UUID] = field(default_factory=dict)
    preexisting: bool = False
    submitted: bool = False

    @classmethod
    def start(cls, principal: Principal, model_id: str, route: str, body: dict[str, Any], *, stream: bool) -> NativeRecord:
        return cls(principal=principal, model_id=model_id, route=route, body=body, stream=stream)

    def add_frame(self, frame: bytes) -> None:
        self.frames.append(frame)

    def pending_bytes(self) -> int:
        return sum(len(frame) for frame in self.frames)

    # -- persisted in the recorder's worker thread -------------------------------------------------
    def result(self) -> NativeResult:
        """The answer merged from every frame; images stay inside their frames until decoded."""
        result = NativeResult()
        for frame in self.frames:
            try:
                chunk = parse_frame(frame)
            except orjson.JSONDecodeError:
                continue
            if isinstance(chunk, dict):
                result.add(chunk)
        return result

    def persist(self) -> None:
        from studio.models import ApiKey, Generation, GenerationStatus, UsageRecord

        from .storage import store_bytes

        result = self.result()
        self.frames = []  # release the frame bytes early
        finals = result.final_images()
        if self.error is not None:
            status = GenerationStatus.FAILED
        elif finals:
            status = GenerationStatus.SUCCEEDED
        else:
            status = GenerationStatus.BLOCKED
        principal = self.principal
        with transaction.atomic():
            values = dict(
                user_id=principal.user_id, api_key_id=principal.key_id, team_id=principal.team_id,
                model_id=self.model_id, upstream_id=self.upstream_id, route=self.route,
                prompt=prompt_of(self.body)[:10000], parameters=self.parameters(), status=status,
                finish_reason=(result.finish_reason if finals else result.block_reason) if self.error is None else "",
                text=result.text[:20000], usage=result.usage, error=self.error_dict(),
                first_byte_ms=self.first_byte_ms, duration_ms=self.duration_ms,
                parent_id=self.parent_generation_id(),
            )
            if self.preexisting:
                Generation.objects.filter(id=self.generation_id).update(**values)
                generation = Generation.objects.get(id=self.generation_id)
            else:
                generation = Generation.objects.create(
                    id=self.generation_id, started_at=datetime.fromtimestamp(self.started_wall, UTC),
                    **values,
                )
            for index, image in enumerate(finals):
                if image.part_index in self.stored_outputs:
                    continue
                try:
                    data = image.decode()  # straight from the frame's bytes, once
                except GatewayError:
                    continue
                store_bytes(data, image.mime, owner_id=principal.user_id, team_id=principal.team_id,
                            generation_id=generation.id, index=index, metadata={"part_index": image.part_index})
            self.store_inputs(generation)
            prompt_tokens, output_tokens, total = usage_counts(result.usage)
            UsageRecord.objects.create(
                api_key_id=principal.key_id, user_id=principal.user_id, model_id=self.model_id,
                upstream_id=self.upstream_id, route=self.route,
                status_code=self.error.status if self.error else 200,
                input_tokens=prompt_tokens, output_tokens=output_tokens, total_tokens=total, images=len(finals),
                latency_ms=self.duration_ms, first_byte_ms=self.first_byte_ms,
            )
            if principal.key_id is not None:
                ApiKey.objects.filter(id=principal.key_id).update(last_used_at=timezone.now())

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

    def store_inputs(self, generation) -> None:
        from .storage import store_bytes

        for mime, data_b64 in self._user_images():
            try:
                data = base64.b64decode(data_b64)
            except (binascii.Error, ValueError):
                continue
            asset = store_bytes(data, mime or "image/png", owner_id=self.principal.user_id,
                                team_id=self.principal.team_id, is_input=True, dedupe=True)
            asset.metadata = {**asset.metadata, "input_of": [*asset.metadata.get("input_of", []), str(generation.id)]}
            asset.save(update_fields=["metadata"])

    def parent_generation_id(self) -> uuid.UUID | None:
        """Lineage of a multi-turn edit: the generation that made the replayed model image."""
        from studio.models import Asset

        for content in reversed(self.body.get("contents") or []):
            if not isinstance(content, dict) or content.get("role") != "model":
                continue
            for part in reversed(content.get("parts") or []):
                inline = inline_data(part) if isinstance(part, dict) else None
                if inline and not part.get("thought"):
                    try:
                        digest = hashlib.sha256(base64.b64decode(str(inline.get("data") or ""))).hexdigest()
                    except (binascii.Error, ValueError):
                        return None
                    asset = Asset.objects.filter(owner_id=self.principal.user_id, sha256=digest,
                                                 generation__isnull=False).only("generation_id").first()
                    return asset.generation_id if asset else None
            return None
        return None
