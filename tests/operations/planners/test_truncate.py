"""
``TRUNCATE TABLE t [PARTITION (…)]`` on every metastore: Hive's refusals (views, tables that are not managed, a
spec on an unpartitioned table or naming no key or no partition), a transactional table truncated under Hive's
EXCLUSIVE lock (refused while a Hive lock or an open transaction stands in the way), the data moved to the
console's trash with the directories left empty, the statistics reset as Hive's metastore resets them, the
ALTER_PARTITION / ALTER_TABLE events, and the revert (untruncate) putting back every row and file, refused when a
file was written to a truncated directory since or the trash no longer holds the data.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError
from catalog_admin.models import (
    HiveLock,
    NextWriteId,
    Partition,
    PartitionColumnStatistics,
    PartitionParam,
    Table,
    TableParam,
    Transaction,
    TransactionComponent,
    TransactionWriteId,
)
from catalog_admin.selectors.metastores import Metastore
from operations.guided import guided_operations, partition_operations
from operations.planners.partitions import TRASH_DIR
from operations.preview import DirectoryMove, Preview
from operations.services import alter, plan_lock
from operations.services.alter import alter_preview_statement
from operations.services.plan_lock import unplanned_entries
from operations.services.revert import revert_preview
from tests.fixtures.factories import table_row
from tests.fixtures.operations import (
    decode_event,
    event_types,
    execute,
    location_of,
    metastore_dump,
    notification_events,
    path_of,
    warehouse_tree,
)
from tests.operations.services.test_hive_locks import hive_lock, locks_on, next_lock_id

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
        ("TRUNCATE TABLE sales.customers PARTITION (dt='2024-01-01')", "not_partitioned"),
        ("TRUNCATE TABLE sales.orders PARTITION (day='2024-01-01')", "unknown_partition_key"),
        ("TRUNCATE TABLE sales.orders PARTITION (dt='1999-01-01')", "no_partition_matches"),
    ],
    ids=["external", "view", "spec-unpartitioned", "unknown-key", "no-match"],
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


def test_a_transactional_table_is_truncated_under_hives_exclusive_lock_and_its_revert_too(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sales.payments_acid (two delta directories; NEXT_WRITE_ID 3): the plan holds Hive's lock, its warning says
    what Hive does on the line; while the files move, the console's EXCLUSIVE lock on the table is in HIVE_LOCKS
    (no transaction), released after; the deltas are in the trash. On Hive 4 the truncate is a committed Hive
    transaction with write id 3, the table's WRITE_ID set to it, as Hive 4's truncate leaves them; on 3.1 and 2.3
    the write ids are untouched, as there. The revert, under the same lock (on 4 a write of its own: write id 4),
    puts every other row and every file back."""
    # given
    acid = table_row(metastore, "sales", "payments_acid")
    root = path_of(acid.sd.location)
    deltas = ["delta_0000001_0000001_0000", "delta_0000002_0000002_0000"]
    assert sorted(p.name for p in root.iterdir()) == deltas
    write_ids = next_write_ids(metastore)
    allocates = metastore.schema.capabilities.truncate_allocates_write_id
    rows_before = metastore_dump(metastore.alias, events=False)
    tree_before = warehouse_tree(warehouse)
    seen: list[list[tuple]] = []
    monkeypatch.setattr(
        alter, "fault_point", lambda name: seen.append(locks_on(metastore, "sales")) if name == "moved" else None
    )

    # when
    preview = preview_of(metastore, "TRUNCATE TABLE sales.payments_acid")
    truncated = execute(preview)

    # then
    assert preview.blockers == () and preview.table_lock and preview.as_dict()["table_lock"]
    assert preview.hive_write == allocates
    warning = next(f.message for f in preview.warnings if f.code == "transactional_truncate")
    version = metastore.schema.version
    if version.major >= 4:
        assert "hive.acid.truncate.usebase=false" in warning and "write id 3" in warning and "empty base_3" in warning
    elif version.major == 3:
        assert "allocates no write id: the table's next, 3, stays" in warning
    else:
        assert "no write ids" in warning
    assert sorted(m.source.rsplit("/", 1)[1] for m in preview.moves) == deltas
    assert root.is_dir() and not any(root.iterdir())
    if next_lock_id(metastore) is not None:
        assert [(lock[1], lock[2], lock[4], lock[5]) for lock in seen[0]] == [(0, "payments_acid", "a", "e")]
    assert locks_on(metastore, "sales") == []
    assert last_alter_table(metastore) == expected_alter(metastore, truncate=True, write_id=3)
    if allocates:
        txn = committed_write(metastore, write_id=3)
        assert truncated.before_image["hive_write"] == {
            "txn_id": txn, "write_id": 3, "database": "sales", "table": "payments_acid"
        }  # fmt: skip
        assert table_row(metastore, "sales", "payments_acid").write_id == 3
        assert next_write_ids(metastore) == bumped(write_ids, 4)
    else:
        assert "hive_write" not in truncated.before_image
        assert next_write_ids(metastore) == write_ids

    seen.clear()
    revert = revert_preview(execution=truncated)
    execute(revert)
    assert revert.table_lock and revert.blockers == () and revert.hive_write == allocates
    if next_lock_id(metastore) is not None:
        assert [(lock[2], lock[5]) for lock in seen[0]] == [("payments_acid", "e")]
    assert last_alter_table(metastore) == expected_alter(metastore, truncate=False, write_id=4)
    if allocates:
        committed_write(metastore, write_id=4)
        assert next_write_ids(metastore) == bumped(write_ids, 5)
    unchanged = without_counters if allocates else without_lock_counters
    assert unchanged(metastore_dump(metastore.alias, events=False)) == unchanged(rows_before)
    assert warehouse_tree(warehouse) == tree_before


def last_alter_table(metastore: Metastore) -> dict[str, object]:
    """The last event's type and what its message says of the change (``isTruncateOp``, ``writeId``), where the
    line's messages carry them."""
    event = notification_events(metastore)[-1]
    message = decode_event(metastore, event)
    return {"type": event.event_type, **{k: message[k] for k in ("isTruncateOp", "writeId") if k in message}}


def expected_alter(metastore: Metastore, *, truncate: bool, write_id: int) -> dict[str, object]:
    """An ALTER_TABLE as Hive writes it: ``isTruncateOp`` from 3.x (true for a TRUNCATE's, ``new
    AlterTableEvent(table, table, true, true, writeId, …)``), the statement's write id from 4.x."""
    expected: dict[str, object] = {"type": "ALTER_TABLE"}
    if metastore.schema.version.major >= 3:
        expected["isTruncateOp"] = "true" if truncate else "false"
    if metastore.schema.version.major >= 4:
        expected["writeId"] = write_id
    return expected


def committed_write(metastore: Metastore, *, write_id: int) -> int:
    """The transaction holding ``write_id`` of sales.payments_acid, checked committed as Hive 4 keeps one; its id."""
    alias = metastore.alias
    (txn,) = (
        TransactionWriteId.objects.using(alias)
        .filter(database="sales", table="payments_acid", write_id=write_id)
        .values_list("txn_id", flat=True)
    )
    assert Transaction.objects.using(alias).filter(id=txn).values_list("state", "type").get() == ("c", 0)
    return txn


def bumped(write_ids: list[tuple[str, str, int]], next_id: int) -> list[tuple[str, str, int]]:
    return sorted((db, t, next_id if (db, t) == ("sales", "payments_acid") else n) for db, t, n in write_ids)


def without_lock_counters(dump: dict[str, list]) -> dict[str, list]:
    """A dump without what taking Hive's locks advances (NEXT_LOCK_ID, AUX_TABLE's CheckLock row)."""
    return {table: rows for table, rows in dump.items() if table.upper() not in ("NEXT_LOCK_ID", "AUX_TABLE")}


def without_counters(dump: dict[str, list]) -> dict[str, list]:
    """:func:`without_lock_counters`, and without what recording Hive writes advances (checked apart)."""
    writes = ("TXNS", "TXN_TO_WRITE_ID", "NEXT_WRITE_ID")
    return {table: rows for table, rows in without_lock_counters(dump).items() if table.upper() not in writes}


def next_write_ids(metastore: Metastore) -> list[tuple[str, str, int]]:
    """NEXT_WRITE_ID's rows (none on 2.3, which has no write ids)."""
    if not metastore.schema.has_write_ids:
        return []
    return sorted(NextWriteId.objects.using(metastore.alias).values_list("database", "table", "next"))


def test_an_open_transaction_writing_the_table_blocks_its_truncate(metastore: Metastore) -> None:
    """ops.job_runs_acid is seeded with an open transaction writing it: Hive's truncate would wait for it, the
    console refuses until it ends."""
    # when
    preview = preview_of(metastore, "TRUNCATE TABLE ops.job_runs_acid")

    # then
    assert "open_transactions" in codes(preview)
    assert (preview.steps, preview.moves) == ((), ())


def test_a_lock_on_the_transactional_table_blocks_the_plan_and_its_execution(
    metastore: Metastore, warehouse: Path
) -> None:
    """A writer's lock on sales.payments_acid (as TxnHandler writes it): the preview names it; taken after the plan
    was made, the execution's own lock is refused naming its holder, and nothing moved."""
    # given
    plan = preview_of(metastore, "TRUNCATE TABLE sales.payments_acid")
    hive_lock(metastore, 9001, table="payments_acid")
    root = path_of(table_row(metastore, "sales", "payments_acid").sd.location)
    entries = sorted(p.name for p in root.iterdir())

    # when
    preview = preview_of(metastore, "TRUNCATE TABLE sales.payments_acid")

    # then
    held = next(f.message for f in preview.blockers if f.code == "locks_held")
    assert held.startswith("1 lock(s) are held or waited for on `sales`.`payments_acid`")
    if next_lock_id(metastore) is not None:  # the plan made before the lock: refused at execution by Hive's lock
        with pytest.raises(ApplicationError, match=r"locked in Hive \(lock 9001 .* by etl@worker-7"):
            execute(plan)
        assert sorted(p.name for p in root.iterdir()) == entries


def test_a_directory_written_between_the_plan_and_the_lock_refuses_the_truncate_naming_it(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delta written by a writer that takes no Hive lock, after the plan was rebuilt and before the lock: listed
    again under the lock, it refuses the execution by name; nothing moved, the new delta is kept."""
    # given
    root = path_of(table_row(metastore, "sales", "payments_acid").sd.location)
    preview = preview_of(metastore, "TRUNCATE TABLE sales.payments_acid")
    newer = root / "delta_0000003_0000003_0000"
    real_lock = plan_lock.exclusive_table_lock

    def lock_after_a_write(*args: object, **kwargs: object):  # noqa: ANN202 - the context manager
        newer.mkdir()
        (newer / "bucket_00000").write_bytes(b"rows")
        return real_lock(*args, **kwargs)

    monkeypatch.setattr(plan_lock, "exclusive_table_lock", lock_after_a_write)

    # when
    with pytest.raises(ApplicationError, match="delta_0000003_0000003_0000") as refused:
        execute(preview)

    # then
    assert "Nothing was moved" in refused.value.message
    assert sorted(p.name for p in root.iterdir()) == [
        "delta_0000001_0000001_0000", "delta_0000002_0000002_0000", "delta_0000003_0000003_0000",
    ]  # fmt: skip
    assert locks_on(metastore, "sales") == []


def test_a_lock_timed_out_by_hives_housekeeping_meanwhile_rolls_the_truncate_back(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hive's housekeeping removes the console's lock while the files move (``timeOutLocks``): Hive's writers may have
    gone in since, so the check just before the commit refuses it; the files are back and no row changed."""
    # given
    if next_lock_id(metastore) is None:
        pytest.skip("the embedded demo metastore has no Hive lock tables")
    rows_before = metastore_dump(metastore.alias, events=False)
    tree_before = warehouse_tree(warehouse)
    preview = preview_of(metastore, "TRUNCATE TABLE sales.payments_acid")

    def housekeeping(name: str) -> None:
        if name == "moved":
            with allow_metastore_writes():
                HiveLock.objects.using(metastore.alias).filter(table="payments_acid", txn_id=0).delete()

    monkeypatch.setattr(alter, "fault_point", housekeeping)

    # when
    with pytest.raises(ApplicationError, match="is gone"):
        execute(preview)

    # then
    assert warehouse_tree(warehouse) == tree_before
    assert without_lock_counters(metastore_dump(metastore.alias, events=False)) == without_lock_counters(rows_before)


def test_unplanned_entries_names_what_appeared_vanished_or_waits_where_files_go(tmp_path: Path) -> None:
    """Directories left must hold exactly the planned entries; directories entered must be empty or absent."""
    # given
    left, entered = tmp_path / "part", tmp_path / "trash"
    left.mkdir()
    (left / "a").write_bytes(b"1")
    (left / "new").write_bytes(b"2")
    entered.mkdir()
    (entered / "stray").write_bytes(b"3")
    moves = [
        DirectoryMove(location_of(left / name), location_of(entered / name), 0, 1, 1, 1, True, True, True)
        for name in ("a", "gone")
    ]

    # when
    found = unplanned_entries(moves)

    # then
    base = location_of(tmp_path)
    assert found == [f"{base}/part/gone", f"{base}/part/new", f"{base}/trash/stray"]


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


def test_a_transactional_table_and_its_partitions_are_offered_the_truncate(metastore: Metastore) -> None:
    """The guided requests of ops.job_runs_acid (transactional, partitioned) and of one of its partitions include
    Truncate, whose statement previews (blocked here by the seeded open transaction, which the preview names)."""
    # when
    table_ops = {op.key: op for op in guided_operations(metastore, "ops.job_runs_acid")}
    partition_ops = {op.key: op for op in partition_operations(metastore, "ops.job_runs_acid", "dt=2024-01-01/hour=0")}

    # then
    assert table_ops["truncate"].statement.startswith("TRUNCATE TABLE `ops`.`job_runs_acid`")
    statement = partition_ops["truncate"].statement
    assert statement.startswith("TRUNCATE TABLE `ops`.`job_runs_acid` PARTITION (`dt`='2024-01-01'")
    assert "open_transactions" in codes(preview_of(metastore, statement))


def test_truncating_partitions_of_a_transactional_table_writes_their_write_id_on_hive_4(
    metastore: Metastore, warehouse: Path
) -> None:
    """ops.job_runs_acid once its open transaction has ended: truncating one day sets the day's two partitions'
    WRITE_ID to the write id allocated (4, the table's next), their ALTER_PARTITION events say it is a truncate and
    carry it; the other day's partitions keep theirs; the revert writes theirs back. 3.1 and 2.3 record no write."""
    # given
    end_open_transactions(metastore)
    table = table_row(metastore, "ops", "job_runs_acid")
    write_ids_before = partition_write_ids(metastore, table.id)
    allocates = metastore.schema.capabilities.truncate_allocates_write_id

    # when
    preview = preview_of(metastore, "TRUNCATE TABLE ops.job_runs_acid PARTITION (dt='2024-01-01')")
    truncated = execute(preview)

    # then
    assert preview.blockers == () and preview.hive_write == allocates
    day = {name for name in write_ids_before if name.startswith("dt=2024-01-01/")}
    assert len(day) == 2
    expected = {name: 4 if allocates and name in day else wid for name, wid in write_ids_before.items()}
    assert partition_write_ids(metastore, table.id) == expected
    events = [decode_event(metastore, e) for e in notification_events(metastore)[-2:]]
    if metastore.schema.version.major >= 3:
        assert [e["isTruncateOp"] for e in events] == ["true", "true"]
    if metastore.schema.version.major >= 4:
        assert [e["writeId"] for e in events] == [4, 4]

    execute(revert_preview(execution=truncated))
    assert partition_write_ids(metastore, table.id) == write_ids_before


def end_open_transactions(metastore: Metastore) -> None:
    """The seeded open transaction ends, committed as the line keeps one (a row in state 'c' on 4.x, none before),
    its locks released."""
    alias = metastore.alias
    with allow_metastore_writes():
        TransactionComponent.objects.using(alias).all().delete()
        HiveLock.objects.using(alias).all().delete()
        opened = Transaction.objects.using(alias).filter(state="o")
        if metastore.schema.version.major >= 4:
            opened.update(state="c")
        else:
            opened.delete()


def partition_write_ids(metastore: Metastore, table_id: int) -> dict[str, int | None]:
    """Each partition's WRITE_ID (4.x); None on the lines without the column."""
    rows = Partition.objects.using(metastore.alias).filter(table_id=table_id)
    if not metastore.schema.has(Partition, "write_id"):
        return dict.fromkeys(rows.values_list("name", flat=True))
    return dict(rows.values_list("name", "write_id"))
