"""The studio's records, one module per aggregate."""

from .accounts import ApiKey, Membership, Role, Team
from .catalog import ModelKind, PlatformModel, Protocol, Upstream
from .edits import EditSession, EditTurn, TurnStatus
from .library import Collection, Prompt
from .media import Asset, AssetKind, Generation, GenerationStatus, Visibility
from .usage import UsageRecord
from .videos import InboundProtocol, VideoStatus, VideoTask

__all__ = [
    "EditSession", "EditTurn", "TurnStatus",
    "ApiKey", "Asset", "Collection", "Prompt", "AssetKind", "Generation", "GenerationStatus", "Membership", "ModelKind",
    "PlatformModel", "Protocol", "Role", "Team", "Upstream", "UsageRecord", "Visibility",
    "InboundProtocol", "VideoStatus", "VideoTask",
]
