"""The studio's records, one module per aggregate."""

from studio.models.accounts import ApiKey, Membership, Role, Team
from studio.models.catalog import ConfigRevision, ModelKind, PlatformModel, Upstream
from studio.models.edits import EditSession, EditTurn, TurnStatus
from studio.models.library import Collection, Prompt
from studio.models.media import Asset, AssetKind, Generation, GenerationStatus, Visibility
from studio.models.responses import StoredResponse
from studio.models.sandbox import SandboxFile, SandboxVideoJob
from studio.models.spend import Budget, BudgetAlert, Period, Price, RateLimit
from studio.models.usage import UsageRecord
from studio.models.videos import VideoProtocol, VideoTask, WebhookDelivery

__all__ = [
    "ConfigRevision", "EditSession", "EditTurn", "TurnStatus",
    "ApiKey", "Asset", "Collection", "Prompt", "AssetKind", "Generation", "GenerationStatus", "Membership", "ModelKind",
    "PlatformModel", "Role", "Team", "Upstream", "UsageRecord", "Visibility",
    "VideoProtocol", "VideoTask", "Budget", "BudgetAlert", "Period", "Price", "RateLimit",
    "WebhookDelivery", "SandboxFile", "SandboxVideoJob", "StoredResponse",
]
