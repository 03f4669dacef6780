"""A vendor's task state read into the one normalized status."""

from __future__ import annotations

import pytest

from studio.core.errors import UnreadableAnswer
from studio.core.video_states import (
    ACTIVE_STATUSES,
    TERMINAL_STATUSES,
    UpstreamVideoState,
    VideoStatus,
    created_task_id,
    is_terminal,
    map_state,
)

STATES = {"Succeeded": VideoStatus.SUCCEEDED, "Failed": VideoStatus.FAILED, "Queued": VideoStatus.QUEUED}


def test_known_words_map_to_their_status():
    assert map_state(STATES, "Succeeded") == VideoStatus.SUCCEEDED
    assert map_state(STATES, "Queued") == VideoStatus.QUEUED


def test_an_unknown_word_keeps_the_task_running_and_an_empty_one_queued():
    assert map_state(STATES, "Rendering-Phase-2") == VideoStatus.RUNNING
    assert map_state(STATES, "") == VideoStatus.QUEUED


def test_terminal_and_active_statuses_do_not_overlap():
    assert not set(ACTIVE_STATUSES) & TERMINAL_STATUSES
    assert set(ACTIVE_STATUSES) | TERMINAL_STATUSES == set(VideoStatus)
    assert is_terminal("succeeded") and is_terminal("cancelled") and not is_terminal("running")


def test_state_reports_whether_it_is_final():
    done = UpstreamVideoState(status=VideoStatus.SUCCEEDED, upstream_status="Succeeded", record={},
                              video_url="https://cdn.test/v.mp4")
    running = UpstreamVideoState(status=VideoStatus.RUNNING, upstream_status="running", record={})
    assert done.terminal and not running.terminal


def test_a_created_task_id_is_a_non_empty_string_or_the_answer_is_unreadable():
    assert created_task_id({"id": "cgt-1"}, "id") == "cgt-1"
    for answer in ({}, {"id": None}, {"id": ""}, {"id": 5}, ["cgt-1"], None):
        with pytest.raises(UnreadableAnswer) as info:
            created_task_id(answer, "task_id", "output.")
        assert info.value.param == "output.task_id" and not info.value.retryable
