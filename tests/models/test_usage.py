"""The usage table's indexes: each owner (key, user, team) has one, with the time, which serves a
lookup by the owner alone too; no second index is written for every row and never read."""

from __future__ import annotations

import pytest
from django.db import connection

from studio.models import UsageRecord

pytestmark = pytest.mark.django_db
OWNERS = ("api_key_id", "user_id", "team_id")


def usage_indexes() -> list[list[str]]:
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, UsageRecord._meta.db_table)
    return [c["columns"] for c in constraints.values() if c["index"] and not c["primary_key"]]


def test_each_owner_has_one_index_and_it_leads_with_the_owner_then_the_time():
    indexes = usage_indexes()
    for owner in OWNERS:
        leading = [columns for columns in indexes if columns[0] == owner]
        assert leading == [[owner, "created"]], (owner, indexes)


def test_no_index_is_a_prefix_of_another():
    indexes = usage_indexes()
    for columns in indexes:
        longer = [other for other in indexes if len(other) > len(columns) and other[:len(columns)] == columns]
        assert not longer, (columns, longer)


def plan(sql: str, params: list) -> str:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL enable_seqscan = off")  # a tiny table is scanned otherwise
            cursor.execute("EXPLAIN " + sql, params)
        else:
            cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
        return "\n".join(" ".join(str(part) for part in row) for row in cursor.fetchall())


@pytest.mark.parametrize("owner", OWNERS)
def test_a_lookup_by_the_owner_alone_reads_its_index(owner):
    query = UsageRecord.objects.filter(**{owner: 1}).values_list("id", flat=True)
    sql, params = query.query.sql_with_params()
    found = plan(sql, list(params))
    assert "INDEX" in found.upper() and "SCAN studio_usagerecord\n" not in found + "\n", found
