"""Upstream callbacks: signed addresses only, for the right task, applied like a poll result."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from studio.core.errors import BadRequest, NotFound, PermissionDenied
from studio.gateway.video import callbacks
from studio.gateway.video.signing import callback_signature
from studio.models.videos import VideoTask

pytestmark = pytest.mark.django_db(transaction=True)


def test_verify_refuses_missing_and_wrong_signatures():
    callbacks.verify("cgt-1", callback_signature("cgt-1"))
    for signature in (None, "", callback_signature("cgt-2")):
        with pytest.raises(PermissionDenied) as exc:
            callbacks.verify("cgt-1", signature)
        assert exc.value.status == 403 and exc.value.code == "invalid_signature"


async def test_a_valid_callback_is_applied_once(alice, make_task, ark):
    fake, _ = ark
    task = await sync_to_async(make_task)(alice.user, callback_injected=True)
    record = {"id": "cgt-up-1", "status": "failed", "error": {"code": "OutputVideoSensitive", "message": "x"}}
    assert await callbacks.receive(task.id, callback_signature(task.id), record) is True
    assert await callbacks.receive(task.id, callback_signature(task.id), record) is False  # a repeat changes nothing
    row = await VideoTask.objects.aget(id=task.id)
    assert (row.status, row.error_code, row.event_seq) == ("failed", "OutputVideoSensitive", 2)
    assert fake.requests == []  # the record came with the callback: the upstream is not asked


async def test_bad_signature_is_refused_before_reading_anything(alice, make_task, ark):
    task = await sync_to_async(make_task)(alice.user, callback_injected=True)
    with pytest.raises(PermissionDenied):
        await callbacks.receive(task.id, "forged", {"id": "cgt-up-1", "status": "succeeded"})
    assert (await VideoTask.objects.aget(id=task.id)).status == "running"


async def test_unknown_tasks_and_tasks_without_a_callback_are_not_found(alice, make_task, ark):
    with pytest.raises(NotFound):
        await callbacks.receive("cgt-nope", callback_signature("cgt-nope"), {"id": "x"})
    task = await sync_to_async(make_task)(alice.user, callback_injected=False)
    with pytest.raises(NotFound):
        await callbacks.receive(task.id, callback_signature(task.id), {"id": "cgt-up-1", "status": "failed"})


async def test_a_record_of_another_task_is_refused(alice, make_task, ark):
    task = await sync_to_async(make_task)(alice.user, callback_injected=True)
    with pytest.raises(BadRequest) as exc:
        await callbacks.receive(task.id, callback_signature(task.id), {"id": "cgt-other", "status": "failed"})
    assert exc.value.param == "id"
    assert (await VideoTask.objects.aget(id=task.id)).status == "running"
