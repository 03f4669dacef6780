"""An admitted images job: the neutral job providers read, plus the engine's ticket."""

from __future__ import annotations

from decimal import Decimal

from studio.core.entries import ModelEntry
from studio.core.images import GENERATIONS, ImageJob
from studio.core.principal import Principal
from studio.gateway.admission import Ticket
from studio.gateway.images.admitted import AdmittedJob

MODEL = ModelEntry(model_id="kappa-image-1", kind="image", routes=frozenset(), capabilities={},
                   default_protocol="openai", owned_by="t", created=0)


def test_an_admitted_job_is_the_job_providers_see():
    job = AdmittedJob(route=GENERATIONS, model=MODEL, family="standard", fields={"n": 2, "size": "1024x1024"},
                      prompt="two pears")
    assert isinstance(job, ImageJob)
    assert (job.count, job.size, job.ticket) == (2, "1024x1024", None)


def test_the_ticket_travels_with_the_job():
    ticket = Ticket(Principal(user_id=1, key_id=2), "kappa-image-1", (), 0.0, estimate_nano=80_000_000)
    job = AdmittedJob(route=GENERATIONS, model=MODEL, family="standard", fields={}, prompt="p", ticket=ticket)
    assert job.ticket is ticket and job.ticket.estimate == Decimal("0.08")
