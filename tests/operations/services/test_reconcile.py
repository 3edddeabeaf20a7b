"""
``reconcile_executions``: settling executions a dying process left RUNNING with directories moved.

The crash is simulated (``crash_at``): the process "dies" at a fault point and does not move anything back.
Died at 'moved', the metastore transaction never committed: reconcile moves the directories back and fails the
execution. Died at 'committed', the transaction did commit (here: released into the test's transaction, which
reconcile reads through the same connection): reconcile records the commit and keeps the directories.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError
from catalog_admin.models import Partition, Sequence, Table, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.models import AuditRecord, DirectoryMoveRecord, Execution
from operations.preview import Preview
from operations.services import one_transaction
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.reconcile import reconcile_executions, sweep_commit_markers
from operations.services.revert import revert_preview
from tests.fixtures.operations import ProcessDied, crash_at, execute, metastore_dump, path_of, warehouse_tree

RENAME = "ALTER TABLE sales.orders RENAME TO marketing.orders_v2"
RENAME_PARTITION = (
    "ALTER TABLE sales.orders PARTITION (dt='2024-01-02', hour=3) RENAME TO PARTITION (dt='2024-02-01', hour=3)"
)
DROP = "ALTER TABLE sales.orders DROP PARTITION (hour >= 6)"
some_metastores = pytest.mark.parametrize("metastore_alias", ["hive23_my", "hive31_pg", "hive_sqlite"], indirect=True)
pg_and_sqlite = pytest.mark.parametrize("metastore_alias", ["hive31_pg", "hive40_pg", "hive_sqlite"], indirect=True)


def crash(metastore: Metastore, monkeypatch: pytest.MonkeyPatch, statement: str, point: str) -> Preview:
    """Execute ``statement`` in a process that dies at ``point``; the preview it ran."""
    plan = alter_preview_statement(metastore=metastore, statement=statement)
    crash_at(monkeypatch, point)
    with pytest.raises(ProcessDied):
        alter_execute(preview=plan, actor="operator:test", source="cli")
    monkeypatch.undo()
    return plan


def states(execution: Execution) -> list[str]:
    return list(execution.moves.order_by("pk").values_list("state", flat=True))


@pytest.mark.parametrize("statement", [RENAME, DROP, RENAME_PARTITION])
def test_an_execution_that_died_before_the_commit_is_rolled_back_on_disk(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch, statement: str
) -> None:
    """Still at the previewed state: every directory moves back, records RESTORED, execution FAILED."""
    # given
    rows, tree = metastore_dump(metastore.alias), warehouse_tree(warehouse)
    plan = crash(metastore, monkeypatch, statement, "moved")
    assert warehouse_tree(warehouse) != tree

    # when
    [result] = reconcile_executions()

    # then
    execution = Execution.objects.get()
    assert (result.execution_id, result.committed, result.state) == (execution.pk, False, Execution.State.FAILED)
    assert result.reason == "no commit marker in the metastore"
    assert [(m.source, m.destination, m.action) for m in result.moves] == [
        (move.source, move.destination, "moved back") for move in plan.moves
    ]
    assert states(execution) == [DirectoryMoveRecord.State.RESTORED] * len(plan.moves)
    assert execution.state == Execution.State.FAILED
    assert execution.error.startswith("The process died before the metastore transaction committed")
    assert execution.finished_at is not None
    assert warehouse_tree(warehouse) == tree
    assert metastore_dump(metastore.alias) == rows
    assert AuditRecord.objects.filter(action="reconcile", execution_id_ref=execution.pk, outcome="failed").exists()


def test_an_execution_that_died_after_the_commit_is_recorded_as_committed(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The commit marker is there: the journal says COMMITTED, the execution RECONCILED, the data stays, and only the
    marker row leaves the metastore."""
    # given
    plan = crash(metastore, monkeypatch, RENAME, "committed")
    rows, tree = metastore_dump(metastore.alias), warehouse_tree(warehouse)
    marker = (Execution.objects.get().commit_marker, Execution.objects.get().pk)
    assert marker in rows["SEQUENCE_TABLE"]

    # when
    [result] = reconcile_executions()

    # then
    execution = Execution.objects.get()
    assert (result.committed, result.state) == (True, Execution.State.RECONCILED)
    assert result.reason == "its commit marker is in the metastore"
    assert [m.action for m in result.moves] == ["kept (committed)"]
    assert states(execution) == [DirectoryMoveRecord.State.COMMITTED]
    assert (execution.state, execution.error) == (Execution.State.RECONCILED, "")
    assert path_of(plan.moves[0].destination).is_dir()
    rows["SEQUENCE_TABLE"].remove(marker)
    assert (warehouse_tree(warehouse), metastore_dump(metastore.alias)) == (tree, rows)


@some_metastores
def test_a_drop_that_died_after_the_commit_can_still_be_reverted_exactly(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows a drop deletes are kept with the execution before the metastore commits: once reconciled, its revert
    puts back every row and moves the data out of the trash."""
    # given
    rows, tree = metastore_dump(metastore.alias, events=False), warehouse_tree(warehouse)
    crash(metastore, monkeypatch, DROP, "committed")
    [result] = reconcile_executions()
    dropped = Execution.objects.get()

    # when
    revert = execute(revert_preview(execution=dropped))

    # then
    assert (result.committed, dropped.state) == (True, Execution.State.RECONCILED)
    assert sum(len(r) for r in dropped.read_before_image()["deleted_rows"].values()) > 0
    assert revert.actual_counts == revert.expected_counts
    assert (metastore_dump(metastore.alias, events=False), warehouse_tree(warehouse)) == (rows, tree)


@some_metastores
def test_a_committed_partition_rename_is_recognized_by_its_new_location(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A partition renamed under the table root leaves the table's fingerprint as it was; the storage descriptor
    pointing at the moved directory shows the commit happened, so nothing is moved back."""
    # given
    plan = crash(metastore, monkeypatch, RENAME_PARTITION, "committed")
    assert (
        Execution.objects.get().fingerprint
        == alter_preview_statement(
            metastore=metastore, statement="ALTER TABLE sales.orders SET OWNER USER x"
        ).state_fingerprint
    )

    # when
    [result] = reconcile_executions()

    # then
    assert (result.committed, result.reason) == (True, "its commit marker is in the metastore")
    assert path_of(plan.moves[0].destination).is_dir()
    assert not path_of(plan.moves[0].source).exists()


@some_metastores
def test_a_dry_run_reports_and_changes_nothing(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--dry-run: the same verdicts, but the journal, the executions and the directories stay as they are."""
    # given
    crash(metastore, monkeypatch, RENAME, "moved")
    crash(metastore, monkeypatch, "ALTER TABLE sales.customers RENAME TO ops.customers", "committed")
    tree = warehouse_tree(warehouse)

    # when
    results = reconcile_executions(dry_run=True)

    # then
    assert [(r.committed, r.state, r.dry_run) for r in results] == [
        (False, Execution.State.RUNNING, True),
        (True, Execution.State.RUNNING, True),
    ]
    assert [m.action for r in results for m in r.moves] == ["moved back", "kept (committed)"]
    assert list(Execution.objects.values_list("state", flat=True)) == [Execution.State.RUNNING] * 2
    assert set(DirectoryMoveRecord.objects.values_list("state", flat=True)) == {DirectoryMoveRecord.State.MOVED}
    assert warehouse_tree(warehouse) == tree


@some_metastores
def test_a_directory_found_at_both_ends_is_left_alone(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the source reappeared meanwhile, nothing is moved over it: the execution stays RUNNING for a person."""
    # given
    plan = crash(metastore, monkeypatch, RENAME, "moved")
    path_of(plan.moves[0].source).mkdir()

    # when
    [result] = reconcile_executions()

    # then
    assert result.moves[0].action == "conflict: source exists, destination exists; left alone"
    assert result.state == Execution.State.RUNNING
    assert states(Execution.objects.get()) == [DirectoryMoveRecord.State.MOVED]
    assert path_of(plan.moves[0].destination).is_dir()


@some_metastores
def test_only_running_executions_with_open_moves_or_past_the_grace_period_are_reconciled(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finished executions and RUNNING ones without a journalled move that started recently are not touched;
    filters narrow the set; once past ``older_than`` the one without moves is settled too."""
    # given
    execute(alter_preview_statement(metastore=metastore, statement=RENAME))
    crash(metastore, monkeypatch, "ALTER TABLE sales.customers SET OWNER USER bob", "before_commit")
    crash(metastore, monkeypatch, "ALTER TABLE sales.customers RENAME TO ops.customers", "moved")
    crashed = Execution.objects.filter(statement__contains="RENAME TO `ops`").get()

    # when
    elsewhere = reconcile_executions(metastore="no-such-metastore")
    other = reconcile_executions(execution_id=crashed.pk + 1000)
    results = reconcile_executions(metastore=metastore.name)

    # then
    assert (elsewhere, other) == ([], [])
    assert [r.execution_id for r in results] == [crashed.pk]
    assert Execution.objects.filter(state=Execution.State.RUNNING).count() == 1  # the one without moves
    assert reconcile_executions() == []
    [late] = reconcile_executions(older_than=0)
    assert (late.statement, late.committed, late.state) == (
        "ALTER TABLE `sales`.`customers` SET OWNER USER `bob`",
        False,
        Execution.State.FAILED,
    )


def set_table_param(metastore: Metastore, table: str, key: str, value: str) -> None:
    """A Hive client changes a table parameter (``ALTER TABLE … SET TBLPROPERTIES``)."""
    database, name = table.split(".")
    table_id = Table.objects.using(metastore.alias).get(database__name=database, name=name).pk
    with allow_metastore_writes():
        TableParam.objects.using(metastore.alias).filter(table_id=table_id, key=key).delete()
        TableParam.objects.using(metastore.alias).create(table_id=table_id, key=key, value=value)


def partition_directories(metastore: Metastore) -> set[str]:
    """The locations of sales.orders' partitions (under the table's directory) that exist on disk."""
    locations = Partition.objects.using(metastore.alias).filter(
        table__database__name="sales", table__name="orders", sd__location__contains="/sales.db/orders/"
    )
    return {location for location in locations.values_list("sd__location", flat=True) if path_of(location).is_dir()}


@pg_and_sqlite
@pytest.mark.parametrize("point", ["moved", "before_commit"])
def test_issue_9_case_4_a_table_changed_after_the_crash_is_not_taken_for_a_commit(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch, point: str
) -> None:
    """Killed after the directory move and before the commit, then a table parameter changed in Hive: reconcile says
    NOT committed (the table looking different proves nothing), moves the directory back, and every partition of
    the table points at an existing directory again."""
    # given
    rows, tree = metastore_dump(metastore.alias), warehouse_tree(warehouse)
    found = partition_directories(metastore)
    plan = crash(metastore, monkeypatch, RENAME, point)
    assert partition_directories(metastore) == set()  # the crash left every partition pointing at nothing
    set_table_param(metastore, "sales.orders", "comment", "changed in Hive after the crash")
    changed = metastore_dump(metastore.alias)

    # when
    [result] = reconcile_executions()

    # then
    assert (result.committed, result.reason, result.state) == (
        False,
        "no commit marker in the metastore",
        Execution.State.FAILED,
    )
    assert [(m.destination, m.source, m.action) for m in result.moves] == [
        (plan.moves[0].destination, plan.moves[0].source, "moved back")
    ]
    assert warehouse_tree(warehouse) == tree
    assert metastore_dump(metastore.alias) == changed != rows  # Hive's change stays; nothing else was written
    assert len(found) > 1 and partition_directories(metastore) == found


@some_metastores
def test_a_successful_or_failed_execution_leaves_no_commit_marker(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The marker lives only as long as the outcome is unrecorded: gone after success, never there after failure."""
    # given
    succeeded = execute(alter_preview_statement(metastore=metastore, statement=RENAME_PARTITION))
    stale = alter_preview_statement(metastore=metastore, statement="ALTER TABLE sales.customers SET OWNER USER ann")
    set_table_param(metastore, "sales.customers", "comment", "changed")

    # when
    with pytest.raises(ApplicationError):
        execute(stale)

    # then
    failed = Execution.objects.get(state=Execution.State.FAILED)
    assert succeeded.commit_marker and failed.commit_marker and succeeded.commit_marker != failed.commit_marker
    markers = Sequence.objects.using(metastore.alias).filter(name__startswith="catalog_admin.commit:")
    assert not markers.exists()


@some_metastores
def test_an_undecidable_execution_is_left_and_reported(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without an answer from the metastore (here: it is no longer configured) or without a marker (recorded before
    markers existed), nothing is moved and the execution stays RUNNING for a later run."""
    # given
    crash(metastore, monkeypatch, RENAME, "moved")
    crash(metastore, monkeypatch, "ALTER TABLE sales.customers RENAME TO ops.customers", "moved")
    first, second = Execution.objects.order_by("pk")
    Execution.objects.filter(pk=first.pk).update(metastore="gone")
    Execution.objects.filter(pk=second.pk).update(commit_marker="")
    tree = warehouse_tree(warehouse)

    # when
    results = reconcile_executions()

    # then
    assert [(r.execution_id, r.committed, r.state) for r in results] == [
        (first.pk, None, Execution.State.RUNNING),
        (second.pk, None, Execution.State.RUNNING),
    ]
    assert results[0].reason.startswith("the metastore cannot be read")
    assert results[1].reason == "it was recorded before commit markers existed; check it by hand"
    assert warehouse_tree(warehouse) == tree
    assert set(DirectoryMoveRecord.objects.values_list("state", flat=True)) == {DirectoryMoveRecord.State.MOVED}


@some_metastores
def test_markers_left_by_finished_executions_are_swept(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that died between recording success and deleting its marker leaves an inert row: the sweep removes
    it; a marker no execution of this console knows (another console's) stays."""
    # given
    monkeypatch.setattr(one_transaction, "clear_commit_marker", lambda metastore, marker: None)
    succeeded = execute(alter_preview_statement(metastore=metastore, statement=RENAME_PARTITION))
    monkeypatch.undo()
    markers = Sequence.objects.using(metastore.alias).filter(name__startswith="catalog_admin.commit:")
    with allow_metastore_writes():
        Sequence.objects.using(metastore.alias).create(name="catalog_admin.commit:elsewhere", next_val=1)

    # when
    dry = sweep_commit_markers(dry_run=True, metastore=metastore.name)
    swept = sweep_commit_markers(metastore=metastore.name)

    # then
    assert (dry, swept) == (1, 1)
    assert succeeded.commit_marker.startswith("catalog_admin.commit:")
    assert list(markers.values_list("name", flat=True)) == ["catalog_admin.commit:elsewhere"]
