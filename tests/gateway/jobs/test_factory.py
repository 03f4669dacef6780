"""From a Generate form to a prepared job: the family picks the job, compare runs share one form."""

from __future__ import annotations

import io
import uuid

import pytest
from PIL import Image

from studio.core.errors import BadRequest, CapabilityMissing, NotFound
from studio.core.principal import Principal
from studio.gateway.jobs import factory
from studio.gateway.jobs.images import ImagesJob
from studio.gateway.jobs.inputs import InputImage
from studio.gateway.jobs.native import NativeJob
from studio.models import Generation
from tests.gateway.catalog import model_entry

pytestmark = pytest.mark.django_db(transaction=True)


def image(n: int = 1) -> list[InputImage]:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), "pink").save(buffer, "PNG")
    return [InputImage(asset_id=uuid.uuid4(), mime="image/png", owner_id=1, team_id=None, data=buffer.getvalue())
            for _ in range(n)]


def test_offered_options_keep_what_the_model_offers():
    options = {"aspect_ratio": "16:9", "image_size": "4K", "size": "1024x1024", "quality": "ultra",
               "seed": 3, "watermark": True, "unknown": 1}
    native = factory.offered_options(options, model_entry("delta-3.1-flash-image"))
    assert native == {"aspect_ratio": "16:9", "image_size": "4K", "seed": 3}
    lite = factory.offered_options(options, model_entry("delta-3.1-flash-lite-image"))
    assert lite == {"aspect_ratio": "16:9", "seed": 3}  # it has the 1K tier only
    standard = factory.offered_options({**options, "quality": "high"}, model_entry("kappa-image-1"))
    assert standard == {"size": "1024x1024", "quality": "high"}


async def test_the_family_picks_the_job_and_the_row_is_created(alice):
    principal = Principal(user_id=alice.user.id)
    native = await factory.build_job(principal, "delta-3.1-flash-image", " a lamp ", {"aspect_ratio": "1:1"}, [])
    assert isinstance(native, NativeJob) and native.prompt == "a lamp"
    assert native.body["generationConfig"]["imageConfig"] == {"aspectRatio": "1:1"}
    standard = await factory.build_job(principal, "kappa-image-1", "a lamp", {"size": "1024x1024"}, [])
    assert isinstance(standard, ImagesJob)
    for job in (native, standard):
        row = await Generation.objects.aget(id=job.id)
        assert row.route == "studio" and row.prompt == "a lamp"


@pytest.mark.parametrize(("model", "error"), [("omicron-4-mini", CapabilityMissing),
                                              ("alpha-2.0", CapabilityMissing), ("no-such-model", NotFound)])
async def test_only_image_models(alice, model, error):
    with pytest.raises(error) as exc:
        await factory.build_job(Principal(user_id=alice.user.id), model, "x", {}, [])
    assert exc.value.param == "model"


async def test_prompt_rules(alice):
    principal = Principal(user_id=alice.user.id)
    with pytest.raises(BadRequest) as exc:
        await factory.build_job(principal, "kappa-image-1", "   ", {}, [])
    assert exc.value.param == "prompt"
    with pytest.raises(BadRequest) as exc:
        await factory.build_job(principal, "kappa-image-1", "x" * (factory.MAX_PROMPT + 1), {}, [])
    assert exc.value.param == "prompt" and "too long" in exc.value.message
    # A layered model may run without a prompt (layer decomposition of an image).
    layered = await factory.build_job(principal, "sigma-5.0-image", "", {"layer_decomposition": True}, [])
    assert isinstance(layered, ImagesJob) and layered.prompt == ""


async def test_reference_limits_and_compare_runs(alice):
    principal = Principal(user_id=alice.user.id)
    with pytest.raises(BadRequest) as exc:
        await factory.build_job(principal, "delta-3.1-flash-lite-image", "x", {}, image(4))
    assert exc.value.param == "inputs"
    # In a compare run the form is shared: extra references and options are dropped per model.
    job = await factory.build_job(principal, "delta-3.1-flash-lite-image", "x", {"image_size": "4K"}, image(4),
                                  compare="cmp-9")
    parts = job.body["contents"][0]["parts"]
    assert len(parts) == 4 and job.body["generationConfig"]["imageConfig"] == {}
    assert (await Generation.objects.aget(id=job.id)).parameters["compare"] == "cmp-9"
