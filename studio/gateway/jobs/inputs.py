"""Reference images of a studio job: stored assets (uploaded, or picked from the gallery with
"use as input") that the signed-in user may see. A forbidden or unknown asset is refused exactly
like a missing one, naming the ``inputs[i]`` field.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass, field
from typing import Any

from studio.core.errors import BadRequest

MAX_INPUTS = 16  # the largest ``max_reference_images`` in the catalog; each model's own limit is checked too


@dataclass(slots=True)
class InputImage:
    asset_id: uuid.UUID
    mime: str
    owner_id: int
    team_id: int | None
    data: bytes = field(repr=False)

    def b64(self) -> str:
        return base64.b64encode(self.data).decode()

    def data_uri(self) -> str:
        return f"data:{self.mime};base64,{self.b64()}"


def parse_ids(raw: Any) -> list[uuid.UUID]:
    if raw in (None, ""):
        return []
    if not isinstance(raw, list):
        raise BadRequest("'inputs' must be a list of asset ids", param="inputs")
    if len(raw) > MAX_INPUTS:
        raise BadRequest(f"too many reference images: {len(raw)}; at most {MAX_INPUTS}", param="inputs")
    ids = []
    for index, value in enumerate(raw):
        try:
            ids.append(uuid.UUID(str(value)))
        except ValueError:
            raise BadRequest(f"inputs[{index}] is not an asset id", param=f"inputs[{index}]") from None
    return ids


def load_inputs(user, ids: list[uuid.UUID]) -> list[InputImage]:
    """The bytes of each asset, in order (sync: file reads and one query)."""
    from studio.gateway.permissions import can_view
    from studio.models import Asset

    found = {asset.id: asset for asset in Asset.objects.filter(id__in=ids, kind="image")}
    images = []
    for index, asset_id in enumerate(ids):
        asset = found.get(asset_id)
        if asset is None or not can_view(user, asset):
            raise BadRequest(f"inputs[{index}]: no such image", param=f"inputs[{index}]")
        with asset.file.open("rb") as handle:
            images.append(InputImage(asset_id=asset.id, mime=asset.mime, owner_id=asset.owner_id,
                                     team_id=asset.team_id, data=handle.read()))
    return images


def check_limit(inputs: list[InputImage], capabilities: dict[str, Any], model_id: str) -> None:
    limit = int(capabilities.get("max_reference_images") or 0)
    if len(inputs) > limit:
        raise BadRequest(f"model '{model_id}' takes at most {limit} reference images; {len(inputs)} were given",
                         param="inputs")
