"""A database that refuses the records of answered calls: the calls still answer, and every failed
write, and every record given up, shows in ``/metrics`` (work done but not billed must be loud)."""

from __future__ import annotations

import pytest

from tests.fault import tally

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.fault]

CHAT = {"model": "omicron-4-mini", "messages": [{"role": "user", "content": "hello"}]}


def value(exposition: str, name: str) -> float:
    for line in exposition.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} is not in /metrics")


async def test_records_the_database_refuses_show_in_the_metrics(client, alice, monkeypatch):
    from django.db import OperationalError
    from django.db.backends import utils

    from studio.gateway import recording, row_writes
    from studio.models import UsageRecord

    table = UsageRecord._meta.db_table
    original, run_native = utils.CursorWrapper._execute_with_wrappers, row_writes.run_native

    def refuse(sql):  # the database refuses usage rows, however written
        if sql.lstrip().upper().startswith("INSERT") and table in sql:
            raise OperationalError("the database refuses writes")

    def refusing(self, sql, params, many, executor):
        refuse(sql)
        return original(self, sql, params, many, executor)

    def refusing_native(connection, sql, params):  # the row writer's own way to SQLite's module
        refuse(sql)
        return run_native(connection, sql, params)

    before = (await client.get("/metrics")).text
    monkeypatch.setattr(utils.CursorWrapper, "_execute_with_wrappers", refusing)
    monkeypatch.setattr(row_writes, "run_native", refusing_native)
    for _ in range(2):
        response = await client.post("/v1/chat/completions", json=CHAT,
                                     headers={"Authorization": f"Bearer {alice.secret}"})
        tally.add("requests tried")
        tally.add("fault scenarios")
        assert response.status_code == 200, response.text
    await recording.drain()
    after = (await client.get("/metrics")).text
    assert value(after, "studio_record_failures_total") > value(before, "studio_record_failures_total")
    assert value(after, "studio_records_dropped_total") - value(before, "studio_records_dropped_total") == 2
    assert value(after, "studio_records_pending") == 0
    assert not await UsageRecord.objects.aexists()
