"""Cancelling and listing a client's video tasks: a cancel reaches the upstream first and then the
row (a task that finished meanwhile stays finished); only the owner's tasks of that protocol are
seen; the list is the last seven days, newest first, filtered and paged."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from studio.core.errors import BadRequest, GatewayError, NotFound, TaskNotCancellable
from studio.core.principal import Principal
from studio.gateway.video import actions
from studio.gateway.video.actions import TaskFilter
from studio.models.videos import VideoTask
from studio.providers import http
from tests.gateway.video.conftest import ARK_BASE, TASKS

pytestmark = pytest.mark.django_db(transaction=True)
CANCEL = ("DELETE", f"{TASKS}/cgt-up-1")


def owner(account) -> Principal:
    return Principal(user_id=account.user.id, key_id=account.key.id)


def deletes(fake) -> list[dict]:
    return [r for r in fake.requests if r["method"] == "DELETE"]


async def test_cancel_asks_the_upstream_then_marks_the_task(alice, ark, make_task) -> None:
    fake, _ = ark
    fake.replies[CANCEL] = (200, {})
    task = await sync_to_async(make_task)(alice.user)
    view = await actions.cancel(owner(alice), "ark", task.id)
    assert [r["path"] for r in deletes(fake)] == [CANCEL[1]]
    assert (view.id, view.status, view.is_terminal) == (task.id, "cancelled", True)
    row = await VideoTask.objects.aget(id=task.id)
    assert (row.status, row.upstream_status, row.error_code) == ("cancelled", "cancelled", "TaskCancelled")


async def test_cancelling_a_cancelled_task_again_answers_the_same_without_the_upstream(alice, ark, make_task):
    fake, _ = ark
    task = await sync_to_async(make_task)(alice.user, status="cancelled")
    view = await actions.cancel(owner(alice), "ark", task.id)
    assert view.status == "cancelled" and deletes(fake) == []


@pytest.mark.parametrize("status", ["succeeded", "failed", "expired"])
async def test_a_finished_task_cannot_be_cancelled(alice, ark, make_task, status: str) -> None:
    fake, _ = ark
    task = await sync_to_async(make_task)(alice.user, status=status)
    with pytest.raises(TaskNotCancellable) as refused:
        await actions.cancel(owner(alice), "ark", task.id)
    assert refused.value.status == 400 and refused.value.param == "taskId" and status in refused.value.message
    assert deletes(fake) == [] and (await VideoTask.objects.aget(id=task.id)).status == status


async def test_an_upstream_refusal_is_the_answer_and_the_task_keeps_running(alice, ark, make_task) -> None:
    fake, _ = ark
    fake.replies[CANCEL] = (409, {"error": {"code": "InvalidAction.TaskRunning", "message": "task is running"}})
    task = await sync_to_async(make_task)(alice.user)
    with pytest.raises(GatewayError) as refused:
        await actions.cancel(owner(alice), "ark", task.id)
    assert "task is running" in refused.value.message
    assert (await VideoTask.objects.aget(id=task.id)).status == "running"


async def test_a_task_that_finished_while_being_cancelled_stays_finished(alice, ark, make_task) -> None:
    fake, _ = ark
    fake.replies[CANCEL] = (200, {})
    task = await sync_to_async(make_task)(alice.user)

    async def finish_then_answer(scope, receive, send) -> None:
        if scope["method"] == "DELETE":  # a poll (or callback) records success before the cancel lands
            await VideoTask.objects.filter(id=task.id).aupdate(status="succeeded", upstream_status="succeeded")
        await fake(scope, receive, send)

    http.mount(ARK_BASE, httpx.ASGITransport(app=finish_then_answer))
    view = await actions.cancel(owner(alice), "ark", task.id)
    assert view.status == "succeeded"
    assert (await VideoTask.objects.aget(id=task.id)).status == "succeeded"


@pytest.mark.parametrize("case", ["someone_elses", "other_protocol", "malformed", "unknown"])
async def test_only_the_owners_task_of_that_protocol_is_found(alice, make_account, ark, make_task, case) -> None:
    fake, _ = ark
    bob = await sync_to_async(make_account)("bob")
    task = await sync_to_async(make_task)(alice.user)
    who, protocol, task_id = {
        "someone_elses": (owner(bob), "ark", task.id), "other_protocol": (owner(alice), "dashscope", task.id),
        "malformed": (owner(alice), "ark", "cgt-up-1"), "unknown": (owner(alice), "ark", "vt-" + "0" * 24),
    }[case]
    with pytest.raises(NotFound) as missing:
        await actions.cancel(who, protocol, task_id)
    assert missing.value.param == "taskId" and missing.value.code == "ResourceNotFound"
    assert deletes(fake) == [] and (await VideoTask.objects.aget(id=task.id)).status == "running"


async def test_the_list_is_the_owners_last_seven_days_newest_first(alice, make_account, make_task) -> None:
    bob = await sync_to_async(make_account)("bob")
    now = timezone.now()
    made = [await sync_to_async(make_task)(alice.user, created=now - timedelta(hours=n)) for n in range(3)]
    await sync_to_async(make_task)(alice.user, created=now - timedelta(days=8))  # too old
    await sync_to_async(make_task)(bob.user)  # someone else's
    await sync_to_async(make_task)(alice.user, protocol="dashscope")  # made through another protocol
    total, page = await actions.list_tasks(owner(alice), "ark", TaskFilter())
    assert total == 3 and [view.id for view in page] == [task.id for task in made]


async def test_the_list_is_paged(alice, make_task) -> None:
    now = timezone.now()
    made = [await sync_to_async(make_task)(alice.user, created=now - timedelta(minutes=n)) for n in range(5)]
    pages = [await actions.list_tasks(owner(alice), "ark", TaskFilter(page_num=n, page_size=2)) for n in (1, 2, 3, 4)]
    assert [total for total, _ in pages] == [5, 5, 5, 5]
    assert [[view.id for view in page] for _, page in pages] == [
        [made[0].id, made[1].id], [made[2].id, made[3].id], [made[4].id], []]


async def test_the_list_filters(alice, make_task) -> None:
    make = sync_to_async(make_task)
    flex = await make(alice.user, status="succeeded", model_id="alpha-2.0-fast", request={"service_tier": "flex"})
    plain = await make(alice.user, status="running")
    queued = await make(alice.user, status="queued", request={"service_tier": "default"})

    async def ids(**query) -> set[str]:
        return {view.id for view in (await actions.list_tasks(owner(alice), "ark", TaskFilter(**query)))[1]}

    assert await ids(status="succeeded") == {flex.id}
    assert await ids(task_ids=(plain.id, queued.id, "vt-" + "1" * 24)) == {plain.id, queued.id}
    assert await ids(model="alpha-2.0-fast") == {flex.id}
    assert await ids(service_tier="flex") == {flex.id}
    assert await ids(service_tier="default") == {plain.id, queued.id}  # unset counts as the default tier


@pytest.mark.parametrize(("query", "param"), [
    ({"page_num": 0}, "page_num"), ({"page_size": 0}, "page_size"), ({"page_size": 501}, "page_size"),
    ({"status": "done"}, "filter.status"),
])
def test_a_bad_list_query_names_its_field(query: dict, param: str) -> None:
    with pytest.raises(BadRequest) as refused:
        TaskFilter(**query)
    assert refused.value.param == param


def test_the_largest_page_is_allowed() -> None:
    assert TaskFilter(page_size=500, page_num=9).page_size == 500
