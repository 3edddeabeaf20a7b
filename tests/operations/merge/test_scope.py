"""The merge preview's scoped counts reach every row through an index (EXPLAIN on the real PostgreSQL schemas)."""

from __future__ import annotations

import pytest
from django.db import connections

from operations.merge.copy_plan import BY_NAME, _source_settings, _unit_where
from operations.merge.reads import MetastoreReader
from operations.merge.scope import CARRIED_TABLES, tally_sql
from operations.spark.programs.merge import _source_settings_sql

pytestmark = [pytest.mark.django_db, pytest.mark.matrix]


def _plan(alias: str, sql: str, settings: tuple[str, ...] = ()) -> str:
    with connections[alias].cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # the test's transaction: rolled back afterwards
        for statement in settings:
            cursor.execute(statement.replace("SET ", "SET LOCAL ", 1))
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


@pytest.mark.parametrize("alias", ["hive23_pg", "hive31_pg", "hive40_pg"])
def test_a_unit_of_a_partition_scoped_table_is_read_by_one_hash_join_through_indexes(alias: str) -> None:
    """The copy's source session for a table scoped by partitions turns nested loops off (its step's
    ``source_settings``), so a unit's rows are joined with the unit's partitions once instead of probed per
    partition; both sides still come through indexes bounded by the unit's range, never the whole table. Without
    the settings the same statement is a nested loop (the check can fail)."""
    # given
    reader = MetastoreReader(alias)
    statistics = BY_NAME["PART_COL_STATS"]
    unit = f'SELECT * FROM "PART_COL_STATS" WHERE {_unit_where(statistics, [1, 2], None)}'
    unit = unit.replace("%(low)s", "1").replace("%(high)s", "50000")
    settings = tuple(_source_settings_sql({"source_settings": _source_settings(statistics, reader)}))
    # when
    default, hinted = _plan(alias, unit), _plan(alias, unit, settings)
    # then
    assert settings == ("SET enable_nestloop = off",)
    assert "Nested Loop" in default
    assert "Nested Loop" not in hinted and "Hash" in hinted and "Seq Scan" not in hinted
    assert _source_settings(BY_NAME["SDS"], reader) == {}  # the other scopes keep the planner's choice


def test_a_source_setting_the_program_does_not_know_is_refused() -> None:
    with pytest.raises(ValueError, match="source setting work_mem='1TB', which the merge program does not set"):
        _source_settings_sql({"source_settings": {"work_mem": "1TB"}})
    with pytest.raises(ValueError, match="enable_nestloop='off; DROP TABLE x'"):
        _source_settings_sql({"source_settings": {"enable_nestloop": "off; DROP TABLE x"}})
