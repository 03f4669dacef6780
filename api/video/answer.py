"""A video task's query answer: the protocol's record, with what the task cost."""

from __future__ import annotations

from django.http import HttpResponse

from api.body import json_response
from api.spend_headers import COST_HEADER
from studio.gateway.cost import display
from studio.gateway.video.view import TaskView


def task_response(value: object, view: TaskView) -> HttpResponse:
    response = json_response(value)
    response[COST_HEADER] = display(view.cost_usd)
    return response
