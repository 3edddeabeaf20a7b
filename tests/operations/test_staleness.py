"""
``compare_plans``: one pure comparison of an approved plan with the plan rebuilt now. No database: plans are built by
hand, and the approved side is given either as a :class:`Preview` or as the JSON summary a request stores.
"""

from __future__ import annotations

import json
from dataclasses import replace

from operations.ddl.parser import parse_alter
from operations.preview import DirectoryMove, HiveComparison, PartitionScope, Preview, Step, TableSnapshot
from operations.rules import Finding
from operations.staleness import StaleChange, compare_plans

DROP = "ALTER TABLE sales.orders DROP PARTITION (dt='2024-01-03', hour=0)"
ROOT = "file:/warehouse/sales.db/orders"


def table() -> TableSnapshot:
    return TableSnapshot(
        database="sales", name="orders", type="MANAGED_TABLE", owner="etl", location=ROOT, input_format=None,
        output_format=None, serde_lib=None, columns=(("id", "bigint", None),), partition_keys=(("dt", "string"),),
        params=(("numRows", "10"),), serde_params=(),
    )  # fmt: skip


def move(source: str) -> DirectoryMove:
    return DirectoryMove(
        source=source, destination="file:/warehouse/sales.db/.trash/orders/dt=2024-01-03/hour=0",
        partitions_moving=1, partitions_staying=0, files=1, bytes=10, source_exists=True, destination_free=True,
        same_filesystem=True,
    )  # fmt: skip


def scope(location: str) -> PartitionScope:
    return PartitionScope(
        table_id=7,
        selection={"ids": [42]},
        count=1,
        digest=str(hash(location)),
        sample=(("dt=2024-01-03/hour=0", 420, location),),
    )


def plan(location: str = f"{ROOT}/dt=2024-01-03/hour=0", *, rows: int = 1, state: str = "s1") -> Preview:
    """The plan of a one-partition drop whose partition is at ``location``."""
    return Preview(
        metastore="hive31_pg",
        schema_version="3.1.0",
        spec=parse_alter(DROP),
        statement=DROP,
        state_fingerprint=state,
        before=table(),
        after=table(),
        steps=(Step("Delete 1 PARTITIONS rows", "PARTITIONS", "delete", 'DELETE FROM "PARTITIONS" …', (42,), rows),),
        moves=(move(location),),
        blockers=(),
        warnings=(),
        hive=HiveComparison("3.1.0", 1, 0, 0.5),
        estimated_seconds=0.1,
        risk="high",
        partitions_touched=1,
        scope=scope(location),
    )


def stored(preview: Preview) -> dict:
    """The summary a change request stores (JSON, as read back from the console's database)."""
    return json.loads(json.dumps(preview.as_dict(), default=str))


def test_the_same_plan_rebuilt_is_not_stale() -> None:
    """Two plans built from the same rows have one fingerprint: nothing is reported."""
    # when
    staleness = compare_plans(stored(plan()), plan())

    # then
    assert (staleness.is_stale, staleness.changes) == (False, ())
    assert staleness.previewed_fingerprint == staleness.current_fingerprint == plan().fingerprint


def test_a_partition_pointed_elsewhere_names_its_location_and_the_move() -> None:
    """The approved partition now points at another directory: its location and the directory move are named."""
    # given
    approved, current = plan(), plan("file:/warehouse/sales.db/customers")

    # when
    staleness = compare_plans(stored(approved), current)

    # then
    assert staleness.is_stale
    assert staleness.changes == (
        StaleChange(
            "Directory moves",
            f"{ROOT}/dt=2024-01-03/hour=0 → file:/warehouse/sales.db/.trash/orders/dt=2024-01-03/hour=0",
            "file:/warehouse/sales.db/customers → file:/warehouse/sales.db/.trash/orders/dt=2024-01-03/hour=0",
        ),
        StaleChange(
            "Location of partition dt=2024-01-03/hour=0",
            f"{ROOT}/dt=2024-01-03/hour=0",
            "file:/warehouse/sales.db/customers",
        ),
    )
    assert staleness.summary == "Directory moves, Location of partition dt=2024-01-03/hour=0"
    assert staleness.as_details()["changed"][1]["now"] == "file:/warehouse/sales.db/customers"


def test_another_expected_row_count_is_another_plan() -> None:
    """A statement expecting another number of rows changes the plan: its rows and the statement are named."""
    # when
    staleness = compare_plans(plan(), plan(rows=2))

    # then
    assert staleness.is_stale
    assert [change.label for change in staleness.changes] == ["Rows of PARTITIONS", "Statement 1"]
    assert staleness.changes[0] == StaleChange("Rows of PARTITIONS", "+0 ~0 −1", "+0 ~0 −2")


def test_other_statement_parameters_are_another_plan() -> None:
    """Same text and counts, other parameters (another partition id): the statement is named as changed."""
    # given
    approved = plan()
    current = replace(approved, steps=(replace(approved.steps[0], params=(43,)),))

    # when
    staleness = compare_plans(approved, current)

    # then
    assert staleness.is_stale
    assert staleness.changes == (
        StaleChange(
            "Statement 1",
            "Delete 1 PARTITIONS rows: delete 1 PARTITIONS rows (as previewed)",
            "Delete 1 PARTITIONS rows: delete 1 PARTITIONS rows (other values)",
        ),
    )


def test_a_change_to_the_tables_rows_alone_is_stale_without_a_readable_item() -> None:
    """The table's rows changed underneath an otherwise identical plan: stale, summarised generically."""
    # when
    staleness = compare_plans(plan(state="s1"), plan(state="s2"))

    # then
    assert (staleness.is_stale, staleness.changes) == (True, ())
    assert staleness.summary == "partitions or statistics"


def test_a_changed_table_parameter_is_named_with_its_entry() -> None:
    """A table parameter added underneath a SET TBLPROPERTIES-like plan is named, before and after the change."""
    # given
    before = table()
    approved = replace(plan(), before=before, after=replace(before, params=(*before.params, ("team", "a"))))
    changed = replace(before, params=(*before.params, ("changed_by_hive", "1")))
    after = replace(changed, params=(*changed.params, ("team", "a")))
    current = replace(approved, before=changed, after=after, state_fingerprint="s2")

    # when
    staleness = compare_plans(stored(approved), current)

    # then
    assert staleness.changes == (
        StaleChange("Table parameters (current table)", "as previewed", "+ changed_by_hive = 1"),
        StaleChange("Table parameters (after the change)", "as previewed", "+ changed_by_hive = 1"),
    )


def in_use(count: int, first: int = 0) -> tuple[Finding, ...]:
    """``count`` directory_in_use blockers (one per partition directory, numbered from ``first``) and one other."""
    found = [Finding("directory_in_use", "containment", f"{ROOT}/dt={n} is in use") for n in range(first, count)]
    return (*found, Finding("destination_exists", "relocate", "file:/n already exists"))


def test_a_blocked_plan_stores_a_bounded_number_of_blockers_per_kind_with_their_total(settings) -> None:
    """50 blockers of one kind: the stored summary lists the first 20 (the setting) and says there are 50."""
    # given
    settings.CATALOG_PREVIEW_FINDINGS_PER_CODE = 20

    # when
    summary = stored(replace(plan(), blockers=in_use(50)))

    # then
    assert [b["message"] for b in summary["blockers"]] == [f"{ROOT}/dt={n} is in use" for n in range(20)] + [
        "file:/n already exists"
    ]
    assert summary["blocker_counts"] == {"directory_in_use": 50, "destination_exists": 1}
    assert summary["executable"] is False


def test_one_more_blocker_of_a_kind_is_another_plan_named_by_its_count() -> None:
    """The fingerprint binds the blockers' counts: one more of a kind is stale, and the change names the kind."""
    # when
    staleness = compare_plans(stored(replace(plan(), blockers=in_use(50))), replace(plan(), blockers=in_use(51)))

    # then
    assert staleness.is_stale
    assert staleness.changes == (StaleChange("Blockers directory_in_use", "50", "51"),)


def test_another_blocker_among_those_not_listed_is_still_another_plan() -> None:
    """Same counts, one blocker left out of the stored list differs: the digest of all of them tells."""
    # given
    approved = replace(plan(), blockers=in_use(50))
    current = replace(plan(), blockers=(*in_use(49), Finding("directory_in_use", "containment", "file:/other")))

    # when
    staleness = compare_plans(stored(approved), current)

    # then
    assert staleness.is_stale
    assert staleness.changes == (
        StaleChange("Blockers", "as previewed", "other blockers, the same number of each kind"),
    )


def test_a_merge_plan_is_compared_by_the_fields_its_kind_declares() -> None:
    """The one comparator compares merge summaries too (``MERGE_FIELDS``): rows per Hive table, databases as they
    arrive, schema versions and blockers by what they name."""
    # given
    from operations.merge.workflow import MERGE_FIELDS

    approved = {
        "fingerprint": "a",
        "source_version": "2.3.0",
        "tables": [{"table": "TBLS", "rows": 4}, {"table": "PARTITIONS", "rows": 10}],
        "databases": [{"name": "sales_imported", "new_location": "/w/sales"}],
        "blockers": [],
    }
    current = {
        **approved,
        "fingerprint": "b",
        "source_version": "2.3.9",
        "tables": [{"table": "TBLS", "rows": 5}, {"table": "PARTITIONS", "rows": 10}],
        "blockers": [{"code": "table_exists", "subject": "sales_imported.orders", "message": "exists"}],
    }
    # when
    staleness = compare_plans(approved, current, MERGE_FIELDS)
    # then
    assert staleness.is_stale
    assert set(staleness.changes) == {
        StaleChange("Source schema", "2.3.0", "2.3.9"),
        StaleChange("TBLS rows", "4", "5"),
        StaleChange("Blockers table_exists", "0", "1"),
    }
