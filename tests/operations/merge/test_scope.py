"""The merge preview's scoped counts reach every row through an index (EXPLAIN on the real PostgreSQL schemas)."""

from __future__ import annotations

import pytest
from django.db import connections

from operations.merge.scope import CARRIED_TABLES, tally_sql

pytestmark = [pytest.mark.django_db, pytest.mark.matrix]


def _plan(alias: str, sql: str) -> str:
    with connections[alias].cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # the test's transaction: rolled back afterwards
        cursor.execute(f"EXPLAIN {sql}")
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.parametrize("alias", ["hive23_pg", "hive31_pg", "hive40_pg"])
def test_every_scoped_count_uses_indexes(alias: str) -> None:
    """With sequential scans priced out, no scoped count still needs one: Hive's schema indexes every key the scopes
    follow (DB_ID, TBL_ID, PART_ID, SD_ID, SERDE_ID, CD_ID), so a count over a few databases of a big metastore
    does not read the whole table. A filter on an unindexed column does show a Seq Scan (the check can fail)."""
    # given
    unindexed = _plan(alias, """SELECT COUNT(*) FROM "TBLS" WHERE "TBL_TYPE" = 'x'""")
    # when
    scanned = {t.name: _plan(alias, tally_sql(t, (1, 2), "postgresql")) for t in CARRIED_TABLES}
    # then
    assert "Seq Scan" in unindexed
    assert {name for name, plan in scanned.items() if "Seq Scan" in plan} == set()
