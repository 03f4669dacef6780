"""The record of one images call: a Generation with its input and output Assets and usage.

Built during the call, persisted off the response path by ``recording``. Output assets get
their ids up front, so a signed URL can be handed out before the row is written.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from studio.core.errors import GatewayError, UnreadableAnswer
from studio.core.images import ImageItem, SourceImage
from studio.core.principal import Principal
from studio.gateway import recording
from studio.gateway.cost import ZERO, Usage
from studio.gateway.images.admitted import AdmittedJob
from studio.gateway.token_counts import count

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from studio.gateway.media.generation_rows import Rows
    from studio.models import Asset


@dataclass(slots=True)
class ImagesRecord(recording.TimedRecord):
    principal: Principal
    job: AdmittedJob
    generation_id: uuid.UUID = field(default_factory=uuid.uuid4)
    upstream_id: int | None = None
    started_wall: float = field(default_factory=time.time)
    started: float = field(default_factory=time.perf_counter)
    first_byte_ms: int | None = None
    duration_ms: int | None = None
    items: list[ImageItem] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    error: GatewayError | None = None
    submitted: bool = False
    # The studio creates the Generation row when a job starts and stores outputs as they stream.
    preexisting: bool = False
    stored: set[uuid.UUID] = field(default_factory=set)
    extra: dict[str, Any] = field(default_factory=dict)  # studio-only parameters (a compare run)
    resolved: dict[str, Any] = field(default_factory=dict)  # what the vendor made of ``auto`` (its echo)
    cost_usd: Decimal = ZERO

    def counted(self) -> Usage:
        """Tokens the upstream reported and one (size, quality) per image made: as asked, or, where
        ``auto`` was asked, as the vendor says it made it (priced like the vendor bills it)."""
        usage = self.usage or {}
        details = usage.get("input_tokens_details")
        size, quality = self.job.size, self.job.quality
        if quality == "auto":
            quality = str(self.resolved.get("quality") or quality)
        made = [(str(item.size or self.resolved.get("size") or size) if size == "auto" else size, quality)
                for item in self.items if item.ok]
        return Usage(input_tokens=count(usage, "input_tokens"), output_tokens=count(usage, "output_tokens"),
                     cached_tokens=count(details, "cached_tokens", DETAILS) if isinstance(details, dict) else 0,
                     images=made)

    def charge(self) -> None:
        if self.job.ticket is not None:
            self.cost_usd = self.job.ticket.charge(None if self.error is not None else self.counted(),
                                                   self.upstream_id)

    # -- persisted in the recorder's worker thread -------------------------------------------------
    def persist(self) -> None:
        self.persist_batch([self])

    @classmethod
    def persist_batch(cls, records: list[ImagesRecord]) -> None:
        """The batch's rows in a few statements (``generation_rows.persist``)."""
        from studio.gateway.media import generation_rows

        generation_rows.persist(records)

    def release(self) -> None:
        self.items = []  # the image bytes, once written for good

    def gather(self, rows: Rows) -> None:
        """This record's rows: its generation's (or the update of the one a studio job made), its
        pictures' (their files written) and its usage's."""
        from studio.models import Generation, GenerationStatus

        made = [item for item in self.items if item.ok]
        status = (GenerationStatus.FAILED if self.error is not None
                  else GenerationStatus.SUCCEEDED if made else GenerationStatus.BLOCKED)
        principal, job = self.principal, self.job
        outcome = dict(
            upstream_id=self.upstream_id, status=status, usage=self.usage or {}, error=self.error_dict(),
            cost_usd=self.cost_usd,
            first_byte_ms=self.first_byte_ms, duration_ms=self.duration_ms, parent_id=self.parent_id(),
            parameters={**self.parameters(), **self.extra},
        )
        route = "studio" if self.preexisting else job.route
        if self.preexisting:
            Generation.objects.filter(id=self.generation_id).update(**outcome)
        else:
            rows.generations.append(dict(
                id=self.generation_id, user_id=principal.user_id, api_key_id=principal.key_id,
                team_id=principal.team_id, model_id=job.model.model_id, route=route, prompt=job.prompt[:10000],
                started_at=datetime.fromtimestamp(self.started_wall, UTC), **outcome,
            ))
        for index, item in enumerate(self.items):
            if item.ok and item.asset_id not in self.stored:
                try:
                    self.store_output(item, index, self.generation_id, rows.pictures)
                except GatewayError as exc:  # not a picture (the client had the vendor's answer as it was)
                    logger.warning("a picture of generation %s was not stored: %s", self.generation_id, exc.message)
        self.store_inputs(self.generation_id)
        rows.usage.append(dict(
            api_key_id=principal.key_id, user_id=principal.user_id, team_id=principal.team_id,
            model_id=job.model.model_id, cost_usd=self.cost_usd,
            upstream_id=self.upstream_id, route=route, status_code=self.error.status if self.error else 200,
            input_tokens=count(self.usage, "input_tokens"), output_tokens=count(self.usage, "output_tokens"),
            total_tokens=count(self.usage, "total_tokens"), images=billed_images(self.usage, len(made)),
            latency_ms=self.duration_ms, first_byte_ms=self.first_byte_ms,
        ))

    def store_output(self, item: ImageItem, index: int, generation_id: uuid.UUID,
                     defer: list[Asset] | None = None) -> None:
        """Store one made picture (with ``defer``: its file, its row left to the caller)."""
        from studio.gateway.media.storage import store_item

        metadata = {k: v for k, v in (("revised_prompt", item.revised_prompt), ("z_index", item.z_index),
                                      ("name", item.name), ("description", item.description),
                                      ("bounding_box", item.bounding_box)) if v is not None}
        store_item(item, owner_id=self.principal.user_id, team_id=self.principal.team_id,
                   generation_id=generation_id, index=index, metadata=metadata, asset_id=item.asset_id, defer=defer)

    def _inputs(self) -> list[tuple[str, SourceImage]]:
        job = self.job
        roles = [("image", image) for image in job.images]
        roles += [("mask", job.mask)] if job.mask else []
        roles += [("background", job.backdrop)] if job.backdrop else []
        return roles

    def store_inputs(self, generation_id: uuid.UUID) -> None:
        from studio.gateway.media.storage import store_bytes
        from studio.models import Asset

        for role, image in self._inputs():
            if image.asset_id is not None:
                asset = Asset.objects.filter(id=image.asset_id).first()
                if asset is None:
                    continue
            else:
                asset = store_bytes(image.data, image.mime, owner_id=self.principal.user_id,
                                    team_id=self.principal.team_id, is_input=True, dedupe=True)
            uses = asset.metadata.get("input_of", [])
            asset.metadata = {**asset.metadata, "input_of": [*uses, {"generation": str(generation_id), "role": role}]}
            asset.save(update_fields=["metadata"])

    def parent_id(self) -> uuid.UUID | None:
        """An edit of one of our outputs continues that generation's lineage."""
        from studio.models import Asset

        for image in self.job.images:
            if image.asset_id is not None:
                asset = Asset.objects.filter(id=image.asset_id).only("generation_id").first()
                if asset is not None and asset.generation_id:
                    return asset.generation_id
        return None

    def parameters(self) -> dict[str, Any]:
        params = {k: v for k, v in self.job.fields.items() if k != "prompt"}
        params["inputs"] = [{"role": role, "field": image.field} for role, image in self._inputs()]
        # Failed items of a group (a set past its cap) have no asset: keep the upstream's reason.
        failed = [{"index": i, **item.error} for i, item in enumerate(self.items) if item.error]
        if failed:
            params["item_errors"] = failed
        return params

    def error_dict(self) -> dict[str, Any]:
        if self.error is None:
            return {}
        return {"status": self.error.status, "message": self.error.message, "code": self.error.code or ""}


DETAILS = "usage.input_tokens_details"


def readable_usage(usage: object) -> dict[str, Any]:
    """An images answer's ``usage`` (``{}`` when it has none) once every count the record reads
    of it is one (``token_counts.count``); otherwise ``UnreadableAnswer``."""
    if usage is None:
        return {}
    if not isinstance(usage, dict):
        raise UnreadableAnswer("the upstream's usage is not an object")
    for name in ("input_tokens", "output_tokens", "total_tokens"):
        count(usage, name)
    details = usage.get("input_tokens_details")
    if isinstance(details, dict):
        count(details, "cached_tokens", DETAILS)
    return usage


def billed_images(usage: dict[str, Any], made: int) -> int:
    """The images the vendor bills: its own ``generated_images`` count when it reports one (a
    layer decomposition bills what the vendor counts, not every file it returns), else the
    images that arrived."""
    reported = (usage or {}).get("generated_images")
    if isinstance(reported, int) and not isinstance(reported, bool) and reported >= 0:
        return reported
    return made
