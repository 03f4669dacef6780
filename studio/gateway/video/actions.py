"""What a client may do with its video tasks besides creating and reading one: cancel, and list.

Cancelling reaches the task where it runs: the upstream that created it is asked first (a task
it has already started is refused there, with its error), and only then is the row marked
``cancelled``, conditionally, so a poll or callback that saw the task finish meanwhile wins.
Cancelling a cancelled task again answers as the first time; a finished one is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from studio.core.errors import BadRequest, NotFound, TaskNotCancellable
from studio.core.principal import Principal
from studio.core.video_states import UpstreamVideoState, VideoStatus
from studio.gateway.video.apply import apply_state
from studio.gateway.video.poll import upstream_of
from studio.gateway.video.view import TaskView, view_of
from studio.models.videos import VideoTask, is_task_id
from studio.providers.registry import video_upstream

# Protocol A lists the tasks of the last seven days, 1 to 500 per page.
LIST_WINDOW = timedelta(days=7)
MAX_PAGE_SIZE = 500


async def _owned(principal: Principal, protocol_name: str, task_id: str) -> VideoTask:
    task = None
    if is_task_id(task_id):
        task = await VideoTask.objects.filter(id=task_id, user_id=principal.user_id, protocol=protocol_name).afirst()
    if task is None:
        raise NotFound(f"task '{task_id}' was not found", param="taskId", code="ResourceNotFound")
    return task


async def cancel(principal: Principal, protocol_name: str, task_id: str) -> TaskView:
    """Cancel the caller's task at its upstream, then in its row; the task as it now stands."""
    task = await _owned(principal, protocol_name, task_id)
    if task.status == VideoStatus.CANCELLED:
        return view_of(task)
    if task.is_terminal:
        raise TaskNotCancellable(f"task '{task_id}' has already finished ({task.status}); "
                                 "only a task that has not finished can be cancelled")
    provider = video_upstream(task.upstream_protocol, await upstream_of(task))
    await provider.video_cancel(task.upstream_task_id)
    word = next((w for w, status in provider.video_states.items() if status == VideoStatus.CANCELLED), "cancelled")
    state = UpstreamVideoState(status=VideoStatus.CANCELLED, upstream_status=word,
                               record={**task.upstream_record}, error_code="TaskCancelled",
                               error_message="the task was cancelled by its owner")
    if not await apply_state(task, state):
        task = await VideoTask.objects.aget(id=task.id)  # it finished meanwhile: show how
    return view_of(task)


@dataclass(frozen=True, slots=True)
class TaskFilter:
    """Protocol A's list query: ``page_num``, ``page_size`` and the ``filter.*`` fields."""

    page_num: int = 1
    page_size: int = 10
    status: str = ""
    task_ids: tuple[str, ...] = ()
    model: str = ""
    service_tier: str = ""

    def __post_init__(self) -> None:
        for name, value, top in (("page_num", self.page_num, None), ("page_size", self.page_size, MAX_PAGE_SIZE)):
            if value < 1 or (top is not None and value > top):
                bound = f"between 1 and {top}" if top else "at least 1"
                raise BadRequest(f"{name} must be {bound}", param=name)
        if self.status and self.status not in VideoStatus.values:
            raise BadRequest(f"filter.status must be one of {', '.join(VideoStatus.values)}", param="filter.status")


async def list_tasks(principal: Principal, protocol_name: str, query: TaskFilter) -> tuple[int, list[TaskView]]:
    """The caller's tasks of the last seven days, newest first: (how many match, this page)."""
    rows = VideoTask.objects.filter(user_id=principal.user_id, protocol=protocol_name,
                                    created__gte=timezone.now() - LIST_WINDOW)
    if query.status:
        rows = rows.filter(status=query.status)
    if query.task_ids:
        rows = rows.filter(id__in=query.task_ids)
    if query.model:
        rows = rows.filter(model_id=query.model)
    if query.service_tier:
        tier = query.service_tier
        # A task created without a tier is on the default one.
        rows = rows.filter(request__service_tier=tier) if tier != "default" else rows.filter(
            ~Q(request__has_key="service_tier") | ~Q(request__service_tier="flex"))
    total = await rows.acount()
    start = (query.page_num - 1) * query.page_size
    page = [view_of(task) async for task in rows.order_by("-created", "-id")[start:start + query.page_size]]
    return total, page
