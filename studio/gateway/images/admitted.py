"""An images job as the engine holds it: the neutral ``ImageJob`` providers see, plus its admission.

The ticket (limits, budget reservation, then the cost) is the engine's business; providers take
the job as an ``ImageJob`` and never see it.
"""

from __future__ import annotations

from dataclasses import dataclass

from studio.core.images import ImageJob
from studio.gateway.admission import Ticket


@dataclass(slots=True)
class AdmittedJob(ImageJob):
    ticket: Ticket | None = None  # its admission: limits and budget reservation, then its cost
