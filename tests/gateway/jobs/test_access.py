"""Who may follow a job and where a job may be saved."""

from __future__ import annotations

import pytest

from studio.core.errors import BadRequest
from studio.gateway.jobs import access
from studio.models import Generation, Prompt

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("raw", [None, "", 0, "0"])
def test_no_team_means_personal(crew, raw):
    assert access.team_for_saving(crew.viewer.id, raw) is None


def test_members_and_up_may_save_into_the_team(crew):
    for user in (crew.member, crew.admin, crew.owner):
        assert access.team_for_saving(user.id, str(crew.team.id)) == crew.team.id


@pytest.mark.parametrize("who", ["viewer", "outsider"])
def test_viewers_and_outsiders_may_not(crew, who):
    with pytest.raises(BadRequest) as exc:
        access.team_for_saving(getattr(crew, who).id, crew.team.id)
    assert exc.value.param == "team"


def test_a_team_that_is_not_a_number(crew):
    with pytest.raises(BadRequest) as exc:
        access.team_for_saving(crew.member.id, "crew")
    assert exc.value.param == "team" and "team id" in exc.value.message


def test_stored_events_follow_the_permission_rules(crew):
    job = Generation.objects.create(user=crew.member, team=crew.team, model_id="m", route="studio",
                                    events=[{"type": "job.started", "seq": 1}])
    assert access.stored_events(crew.viewer.id, str(job.id)) == [{"type": "job.started", "seq": 1}]
    assert access.stored_events(crew.outsider.id, str(job.id)) is None


def test_remember_prompt_adds_to_the_history(crew):
    access.remember_prompt(crew.member.id, "a paper boat")
    access.remember_prompt(crew.member.id, "a paper boat")
    assert Prompt.objects.get(owner=crew.member).use_count == 2
