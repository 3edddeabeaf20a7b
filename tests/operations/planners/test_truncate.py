"""
``TRUNCATE TABLE t [PARTITION (…)]`` on every metastore: Hive's refusals (views, tables that are not managed,
transactional tables, a spec on an unpartitioned table or naming no key or no partition), the data moved to the
console's trash with the directories left empty, the statistics reset as Hive's metastore resets them, the
ALTER_PARTITION / ALTER_TABLE events, and the revert (untruncate) putting back every row and file, refused when a
file was written to a truncated directory since or the trash no longer holds the data.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalog_admin.errors import ApplicationError
from catalog_admin.models import Partition, PartitionColumnStatistics, PartitionParam, Table, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.planners.partitions import TRASH_DIR
from operations.preview import Preview
from operations.services.alter import alter_preview_statement
from operations.services.revert import revert_preview
from tests.fixtures.factories import table_row
from tests.fixtures.operations import event_types, execute, metastore_dump, path_of, warehouse_tree
from tests.operations.services.test_hive_locks import hive_lock

DAY = ("dt=2024-01-01/hour=0", "dt=2024-01-01/hour=3", "dt=2024-01-01/hour=6", "dt=2024-01-01/hour=9")
RESET = ("numFiles", "numRows", "rawDataSize", "totalSize")


def preview_of(metastore: Metastore, statement: str) -> Preview:
    return alter_preview_statement(metastore=metastore, statement=statement)


def codes(preview: Preview) -> list[str]:
    return [f.code for f in preview.blockers]


def partition_rows(metastore: Metastore, table_id: int, names: tuple[str, ...]) -> dict[str, int]:
    rows = Partition.objects.using(metastore.alias).filter(table_id=table_id, name__in=names)
    return dict(rows.values_list("name", "id"))


def params_of(metastore: Metastore, part_id: int) -> dict[str, str | None]:
    return dict(PartitionParam.objects.using(metastore.alias).filter(partition_id=part_id).values_list("key", "value"))


def files_under(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())


@pytest.mark.parametrize(
    ("statement", "code"),
    [
        ("TRUNCATE TABLE marketing.clicks", "non_managed_table"),
        ("TRUNCATE TABLE marketing.campaign_performance", "non_managed_table"),
        ("TRUNCATE TABLE sales.payments_acid", "transactional_table"),
        ("TRUNCATE TABLE sales.customers PARTITION (dt='2024-01-01')", "not_partitioned"),
        ("TRUNCATE TABLE sales.orders PARTITION (day='2024-01-01')", "unknown_partition_key"),
        ("TRUNCATE TABLE sales.orders PARTITION (dt='1999-01-01')", "no_partition_matches"),
    ],
    ids=["external", "view", "transactional", "spec-unpartitioned", "unknown-key", "no-match"],
)
def test_hive_refusals_block_the_truncate_and_nothing_is_planned(
    metastore: Metastore, statement: str, code: str
) -> None:
    """Each of Hive's refusals is a named blocker; the plan holds no statement and no move."""
    # when
    preview = preview_of(metastore, statement)

    # then
    assert code in codes(preview)
    assert (preview.steps, preview.moves) == ((), ())


def test_the_transactional_refusal_says_what_hive_would_do_on_the_metastores_line(metastore: Metastore) -> None:
    """sales.payments_acid's NEXT_WRITE_ID is 3 (seeded): Hive 4.0 would allocate write id 3 and write an empty base_3,
    3.1 deletes the files in its transaction (next write id 3); 2.3 has no write ids. Nothing is planned."""
    # when
    preview = preview_of(metastore, "TRUNCATE TABLE sales.payments_acid")

    # then
    refusal = next(f.message for f in preview.blockers if f.code == "transactional_table")
    version = metastore.schema.version
    if version.major >= 4:
        assert "write id 3" in refusal and "empty base_3" in refusal
    elif version.major == 3:
        assert "next write id is 3" in refusal and "deletes the files" in refusal
    else:
        assert "no write ids" in refusal
    assert refusal.endswith("Run TRUNCATE TABLE `sales`.`payments_acid` with Hive.")
    assert "open_transactions" not in codes(preview)
    assert (preview.steps, preview.moves) == ((), ())


def test_an_open_transaction_writing_the_table_is_named_beside_the_refusal(metastore: Metastore) -> None:
    """ops.job_runs_acid is seeded with an open transaction writing it: Hive's truncate would wait for it, so the
    refusal names it too."""
    # when
    preview = preview_of(metastore, "TRUNCATE TABLE ops.job_runs_acid")

    # then
    assert {"transactional_table", "open_transactions"} <= set(codes(preview))
    assert (preview.steps, preview.moves) == ((), ())


def test_a_lock_on_the_transactional_table_is_named_beside_the_refusal(metastore: Metastore) -> None:
    """A writer's lock on sales.payments_acid (as TxnHandler writes it): Hive's truncate would wait for it."""
    # given
    hive_lock(metastore, 9001, table="payments_acid")

    # when
    preview = preview_of(metastore, "TRUNCATE TABLE sales.payments_acid")

    # then
    held = next(f.message for f in preview.blockers if f.code == "locks_held")
    assert held.startswith("1 lock(s) are held or waited for on `sales`.`payments_acid`")


def test_a_partial_spec_truncates_its_partitions_into_the_trash_and_resets_their_statistics(
    metastore: Metastore, warehouse: Path
) -> None:
    """Every file of the four dt=2024-01-01 partitions goes to the trash, their directories stay empty, the basic
    statistics present are 0, COLUMN_STATS_ACCURATE is basic-only, their column statistics are gone; the other
    partitions are untouched."""
    # given
    orders = table_row(metastore, "sales", "orders")
    ids = partition_rows(metastore, orders.id, DAY)
    others = {
        name: params_of(metastore, pid)
        for name, pid in partition_rows(metastore, orders.id, ("dt=2024-01-02/hour=0",)).items()
    }
    locations = dict(
        Partition.objects.using(metastore.alias).filter(id__in=ids.values()).values_list("name", "sd__location")
    )
    before_files = {name: files_under(path_of(loc)) for name, loc in locations.items()}
    assert any(before_files.values())

    # when
    preview = preview_of(metastore, "TRUNCATE TABLE sales.orders PARTITION (dt='2024-01-01')")
    execution = execute(preview)

    # then
    assert preview.blockers == ()
    assert preview.partitions_touched == 4
    assert preview.risk == "high"
    assert "data_truncated" in [c.name for c in preview.criteria]
    assert execution.actual_counts == execution.expected_counts
    for name, location in locations.items():
        assert path_of(location).is_dir() and not any(path_of(location).iterdir()), name
    assert all(f"/{TRASH_DIR}/orders/truncate-" in move.destination for move in preview.moves)
    assert all(path_of(move.destination).exists() for move in preview.moves)
    assert sum(move.files or 0 for move in preview.moves) == sum(len(files) for files in before_files.values())
    for pid in ids.values():
        params = params_of(metastore, pid)
        assert {k: params[k] for k in RESET if k in params} == dict.fromkeys([k for k in RESET if k in params], "0")
        assert json.loads(params["COLUMN_STATS_ACCURATE"]) == {"BASIC_STATS": "true"}
    stats = PartitionColumnStatistics.objects.using(metastore.alias).filter(partition_id__in=ids.values())
    assert not stats.exists()
    unchanged = partition_rows(metastore, orders.id, ("dt=2024-01-02/hour=0",))
    assert {name: params_of(metastore, pid) for name, pid in unchanged.items()} == others
    if metastore.config.events:
        assert event_types(metastore)[-4:] == ["ALTER_PARTITION"] * 4


def test_reverting_a_truncate_restores_every_row_and_file(metastore: Metastore, warehouse: Path) -> None:
    """Untruncate: the metastore's rows (events aside) and the warehouse's files are exactly as before."""
    # given
    rows_before = metastore_dump(metastore.alias, events=False)
    tree_before = warehouse_tree(warehouse)
    truncated = execute(preview_of(metastore, "TRUNCATE TABLE sales.orders PARTITION (dt='2024-01-02')"))
    assert warehouse_tree(warehouse) != tree_before

    # when
    revert = revert_preview(execution=truncated)
    execute(revert)

    # then
    assert revert.blockers == ()
    assert metastore_dump(metastore.alias, events=False) == rows_before
    assert warehouse_tree(warehouse) == tree_before


def test_truncating_an_unpartitioned_table_resets_the_table_and_its_revert_puts_it_back(
    metastore: Metastore, warehouse: Path
) -> None:
    """The table's own directory is emptied into the trash, its TABLE_PARAMS reset, one ALTER_TABLE; revert exact."""
    # given
    customers = table_row(metastore, "sales", "customers")
    rows_before = metastore_dump(metastore.alias, events=False)
    tree_before = warehouse_tree(warehouse)
    root = path_of(customers.sd.location)
    assert files_under(root)

    # when
    preview = preview_of(metastore, "TRUNCATE TABLE sales.customers")
    execution = execute(preview)

    # then
    assert preview.blockers == ()
    assert root.is_dir() and not any(root.iterdir())
    params = dict(TableParam.objects.using(metastore.alias).filter(table_id=customers.id).values_list("key", "value"))
    assert json.loads(params["COLUMN_STATS_ACCURATE"]) == {"BASIC_STATS": "true"}
    assert all(params[k] == "0" for k in RESET if k in params)
    if metastore.config.events:
        assert event_types(metastore)[-1] == "ALTER_TABLE"

    execute(revert_preview(execution=execution))
    assert metastore_dump(metastore.alias, events=False) == rows_before
    assert warehouse_tree(warehouse) == tree_before
    assert Table.objects.using(metastore.alias).filter(id=customers.id).exists()


def test_a_file_written_since_the_truncate_refuses_the_revert_naming_it(metastore: Metastore, warehouse: Path) -> None:
    """A new file in a truncated directory is newer than the truncate: the revert is blocked, naming it, and the
    file is left alone."""
    # given
    customers = table_row(metastore, "sales", "customers")
    truncated = execute(preview_of(metastore, "TRUNCATE TABLE sales.customers"))
    newer = path_of(customers.sd.location) / "part-new.parquet"
    newer.write_bytes(b"new rows")

    # when
    revert = revert_preview(execution=truncated)

    # then
    found = {f.code: f.message for f in revert.blockers}
    assert "written_since_truncate" in found
    assert "part-new.parquet" in found["written_since_truncate"]
    with pytest.raises(ApplicationError):
        execute(revert)
    assert newer.read_bytes() == b"new rows"


def test_a_purged_trash_refuses_the_revert_naming_why(metastore: Metastore, warehouse: Path) -> None:
    """Once the trash no longer holds the data, there is nothing to move back: refused as ``trash_purged``."""
    # given
    truncated = execute(preview_of(metastore, "TRUNCATE TABLE sales.customers"))
    record = truncated.moves.first()
    assert record is not None
    path_of(record.destination).unlink()

    # when
    revert = revert_preview(execution=truncated)

    # then
    assert "trash_purged" in codes(revert)


def test_the_statistics_reset_is_set_based_whatever_the_number_of_partitions(metastore: Metastore) -> None:
    """A whole-table truncate of sales.orders (12 partitions) resets every partition's statistics in at most one
    UPDATE, one INSERT and one DELETE (a statement per 5,000 partitions, never one per partition)."""
    # when
    preview = preview_of(metastore, "TRUNCATE TABLE sales.orders")

    # then
    assert preview.blockers == ()
    assert preview.partitions_touched == 12
    assert len(preview.steps) <= 3
    assert sum(s.expected_rows for s in preview.steps if s.metastore_table == "PART_COL_STATS") == (
        PartitionColumnStatistics.objects.using(metastore.alias).filter(partition__table__name="orders").count()
    )
    assert "directories_missing" in [w.code for w in preview.warnings]  # dt=2024-01-03/hour=9 has none


def test_a_link_among_the_data_refuses_the_truncate_and_is_never_followed(
    metastore: Metastore, warehouse: Path, tmp_path: Path
) -> None:
    """A symbolic link in a truncated directory is a blocker naming it; nothing moves, the link's target stays."""
    # given
    customers = table_row(metastore, "sales", "customers")
    target = tmp_path / "elsewhere.parquet"
    target.write_bytes(b"not the table's")
    (path_of(customers.sd.location) / "linked.parquet").symlink_to(target)

    # when
    preview = preview_of(metastore, "TRUNCATE TABLE sales.customers")

    # then
    assert "symlink_in_data" in codes(preview)
    with pytest.raises(ApplicationError):
        execute(preview)
    assert target.read_bytes() == b"not the table's"
    assert (path_of(customers.sd.location) / "linked.parquet").is_symlink()
