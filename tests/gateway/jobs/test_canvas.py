"""Jobs from the studio's tools: the tool's details kept on the row, lineage to the starting picture."""

# ruff: noqa: F811  (fixtures imported from native_fakes are used as test arguments)

from __future__ import annotations

import base64
import io
import uuid

import pytest
from PIL import Image

from studio.core.images import GENERATIONS, ImageJob, SourceImage
from studio.core.principal import Principal
from studio.gateway import recording
from studio.gateway.jobs import base as job_base
from studio.gateway.jobs import canvas
from studio.gateway.jobs.native import native_body
from studio.gateway.media.storage import store_bytes
from studio.models import Generation
from tests.api.native.native_fakes import fake_gemini, image_frame, sse_reply  # noqa: F401
from tests.gateway.catalog import model_entry

pytestmark = pytest.mark.django_db(transaction=True)

MODEL = "delta-3.1-flash-image"
TOOL = {"mode": "compose", "frame": [0, 0, 512, 512], "roles": ["subject", "style"]}


def png(color: str = "tan") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), color).save(buffer, "PNG")
    return buffer.getvalue()


def test_tool_record_lineage_prefers_the_input_then_the_started_from_picture(alice):
    earlier = Generation.objects.create(user=alice.user, model_id="kappa-image-1", route="studio")
    started_from = Generation.objects.create(user=alice.user, model_id="kappa-image-1", route="studio")
    output = store_bytes(png(), "image/png", owner_id=alice.user.id, generation_id=earlier.id)
    job = ImageJob(route=GENERATIONS, model=model_entry("kappa-image-1"), family="standard", fields={}, prompt="p")
    record = canvas.ToolRecord(principal=Principal(user_id=alice.user.id), job=job,
                               source_generation=started_from.id)
    assert record.parent_id() == started_from.id  # a prepared canvas: no stored input
    job.images.append(SourceImage(data=png(), mime="image/png", width=16, height=16, field="images[0]",
                                  asset_id=output.id))
    assert record.parent_id() == earlier.id


async def test_native_tool_job_keeps_the_tool_and_the_lineage(alice, fake_gemini):
    started_from = await Generation.objects.acreate(user=alice.user, model_id=MODEL, route="studio")
    fake_gemini["fake-gemini"].queue(sse_reply(image_frame(base64.b64encode(png("navy")).decode())))
    job = canvas.ToolNativeJob(Principal(user_id=alice.user.id), MODEL, native_body("blend them", {}, []),
                               "blend them", tool=TOOL, source_generation=started_from.id)
    await job.prepare()
    row = await Generation.objects.aget(id=job.id)
    assert row.parameters["tool"] == TOOL
    await job.run()
    await recording.drain()
    row = await Generation.objects.aget(id=job.id)
    # The native record rewrote the parameters when it was persisted; the tool's details came back.
    assert row.parameters["tool"] == TOOL and row.parameters["stream"] is True
    assert row.parent_id == started_from.id and row.status == "succeeded"
    assert row.events[-1]["type"] == "job.completed"


async def test_launch_from_request_runs_outside_the_requests_context(alice, fake_gemini):
    fake_gemini["fake-gemini"].queue(sse_reply(image_frame(base64.b64encode(png()).decode())))
    job = canvas.ToolNativeJob(Principal(user_id=alice.user.id), MODEL, native_body("x", {}, []), "x",
                               tool={"mode": "edit"})
    await job.prepare()
    canvas.launch_from_request(job)
    assert job_base._running
    await job_base.wait_for_running_jobs()
    await recording.drain()
    assert (await Generation.objects.aget(id=job.id)).events[-1]["type"] == "job.completed"


def test_keep_tool_details_ignores_unknown_rows():
    canvas._keep_tool_details(uuid.uuid4(), TOOL, None)  # nothing to update, nothing raised
    assert not Generation.objects.exists()
