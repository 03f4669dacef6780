"""No video task is lost to upstream faults.

Tasks are created on all three protocols against loopback vendors (protocol A and C on an Ark
vendor, B on a DashScope one), which then fail every query in every way (500, 429, a body cut
short, a hang, a body that is not JSON, a refused connection). Meanwhile the worker keeps polling,
the client's queries keep answering, and creates that failed leave no task behind. Tasks whose
time runs out while their vendor is down end expired; the others end succeeded once it is back.
A task that is not terminal at the end is a lost task.
"""

from __future__ import annotations

import asyncio
import itertools
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.fault import tally
from tests.fault.conftest import is_family_error, use_mode
from tests.fault.vendor import closed_port

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.fault]

QUERY_FAULTS = ("500", "429", "cut", "hang", "malformed", "refuse")
CREATE_FAULTS = ("500", "cut", "malformed")
ARK, DASHSCOPE = "/api/v3", "/api/v1"
# (route, body, family, query route)
CREATES = [
    ("/v1/alpha/video/generations", {"model": "alpha-2.0-fast", "content": [{"type": "text", "text": "tide"}]},
     "ark", "/v1/alpha/video/generations/{id}"),
    ("/v1/beta/video/generations", {"model": "beta2.7-t2v", "input": {"prompt": "tide"}}, "dashscope",
     "/v1/beta/video/generations/{id}"),
    ("/v1/video/generations", {"model": "alpha-2.0-fast", "prompt": "tide"}, "openai", "/v1/video/generations/{id}"),
]
TASKS_PER_ROUTE = 2


def video_reply(protocol: str):
    """What a healthy vendor of ``protocol`` answers: tasks are created, then found succeeded (their
    file on a closed port, so the gateway keeps the vendor's link)."""
    numbers = itertools.count(1)
    done_url = f"http://127.0.0.1:{closed_port()}/v.mp4"

    def reply(method: str, path: str, body: dict) -> tuple[int, object]:
        task_id = path.rsplit("/", 1)[-1]
        if protocol == "ark":
            if method == "POST":
                return 200, {"id": f"cgt-{next(numbers)}"}
            return 200, {"id": task_id, "model": "vendor-video", "status": "succeeded", "duration": 4,
                         "content": {"video_url": done_url}, "usage": {"completion_tokens": 100}}
        if method == "POST" and not path.endswith("/cancel"):
            return 200, {"request_id": "r", "output": {"task_id": f"ds-{next(numbers)}", "task_status": "PENDING"}}
        return 200, {"request_id": "r", "output": {"task_id": task_id, "task_status": "SUCCEEDED",
                                                   "video_url": done_url}, "usage": {"duration": 5, "video_count": 1}}

    return reply


@pytest.fixture
def video_vendors(faulty_upstream, settings):
    settings.STUDIO_VIDEO_FIRST_POLL = 0
    settings.STUDIO_VIDEO_POLL_SCALE = 0
    ark = faulty_upstream("ark", ARK, {"alpha-2.0-fast": "vendor-video"}, video_reply("ark"))
    dashscope = faulty_upstream("dashscope", DASHSCOPE, {"beta2.7-t2v": "vendor-wan"}, video_reply("dashscope"))
    return {ARK: ark, DASHSCOPE: dashscope}


async def _all_modes(vendors, mode: str) -> None:
    for path, (vendor, row) in vendors.items():
        await use_mode(row, vendor, mode, path)


async def _poll_all_due() -> None:
    from studio.models import VideoTask
    from studio.workers import video as worker

    await VideoTask.objects.aupdate(next_poll_at=timezone.now() - timedelta(seconds=1))
    await worker.run_once("fault-worker")


async def test_no_task_is_lost_to_upstream_faults(client, alice, video_vendors):
    from studio.core.video_states import ACTIVE_STATUSES
    from studio.models import VideoTask

    headers = {"Authorization": f"Bearer {alice.secret}"}
    problems = []

    # Creates that fail are the family's error and leave no row behind.
    for mode in CREATE_FAULTS:
        await _all_modes(video_vendors, mode)
        for route, body, family, _ in CREATES:
            response = await client.post(route, json=body, headers=headers)
            tally.add("requests tried")
            tally.add("fault scenarios")
            if response.status_code not in (502, 503, 504) or not is_family_error(family, response.json()):
                problems.append(f"create {route} under {mode}: {response.status_code} {response.text[:200]}")
    assert not await VideoTask.objects.aexists(), "a failed create left a task behind"

    await _all_modes(video_vendors, "ok")
    created = []  # (task id, query route)
    for route, body, _, query in CREATES:
        for _ in range(TASKS_PER_ROUTE):
            response = await client.post(route, json=body, headers=headers)
            tally.add("requests tried")
            assert response.status_code == 200, response.text
            answer = response.json()
            created.append((answer.get("id") or answer.get("task_id") or answer["output"]["task_id"], query))

    # Every kind of query fault, one worker round each; the client's queries still answer.
    for mode in QUERY_FAULTS:
        await _all_modes(video_vendors, mode)
        await _poll_all_due()
        tally.add("fault scenarios")
        for task_id, query in created:
            response = await client.get(query.format(id=task_id), headers=headers)
            tally.add("requests tried")
            if response.status_code != 200 or task_id not in response.text:
                if response.status_code >= 500:
                    tally.add("unexpected 5xx")
                problems.append(f"query {task_id} while the vendor answers {mode}: {response.status_code}")
    lost = await VideoTask.objects.filter(upstream_task_id="").acount()

    # Half the tasks run out of time while their vendor is still down: they end expired.
    doomed = [task_id for task_id, _ in created[::2]]
    await VideoTask.objects.filter(id__in=doomed).aupdate(expires_at=timezone.now() - timedelta(seconds=1))
    await _poll_all_due()
    await _all_modes(video_vendors, "ok")
    for _ in range(10):
        if not await VideoTask.objects.filter(status__in=ACTIVE_STATUSES).aexists():
            break
        await _poll_all_due()
        await asyncio.sleep(0.05)

    states = {task.id: task.status async for task in VideoTask.objects.all()}
    lost += sum(1 for status in states.values() if status in ACTIVE_STATUSES)
    tally.add("tasks lost", lost)
    assert lost == 0, states
    assert {states[task_id] for task_id in doomed} == {"expired"}, states
    assert {status for task_id, status in states.items() if task_id not in doomed} == {"succeeded"}, states
    assert len(states) == len(created)
    assert not problems, "\n".join(problems)
