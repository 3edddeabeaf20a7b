"""
The directory journal in batches (``operations/services/move_journal.py``): every move planned before the first,
done-marks written every ``CATALOG_MOVE_JOURNAL_BATCH`` moves. A real ``kill -9`` in the middle of a batch
(``manage.py hive_ddl … --execute`` in its own process, ``CATALOG_ADMIN_KILL_AT=move:N``; batches of 2 here) leaves
moves done but journaled INTENDED beside moves never started; ``reconcile_executions`` tells them apart from the disk,
and every directory ends fully back with the metastore rows kept (killed before the commit), or fully moved with the
rows gone (killed after it). A journaled move found at both ends is refused by name, and nothing is decided for it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections

from catalog_admin.models import Partition
from catalog_admin.selectors.metastores import Metastore
from operations.models import DirectoryMoveRecord, Execution
from operations.services.alter import alter_preview_statement
from operations.services.reconcile import reconcile_executions
from operations.services.revert import revert_preview
from tests.fixtures.operations import events_restored, execute, metastore_dump, path_of, warehouse_tree

DROP = "ALTER TABLE sales.orders DROP PARTITION (hour >= 6)"  # 6 partitions, 5 directories (one is missing on disk)
ALIASES = ["hive31_pg", "hive_sqlite"]

pytestmark = [
    pytest.mark.parametrize("metastore_alias", ALIASES, indirect=True),
    pytest.mark.django_db(transaction=True, databases=["default", *ALIASES]),
    pytest.mark.usefixtures("restore_roles"),
    pytest.mark.slow,
]


def killed_drop(metastore: Metastore, point: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``manage.py hive_ddl DROP --execute`` in its own process, journal batches of 2, killed at ``point``."""
    name = connections["default"].settings_dict["NAME"]
    (tmp_path / "kill_settings.py").write_text(
        "from tests.settings import *\n"
        f"DATABASES['default'] = {{**DATABASES['default'], 'NAME': {name!r}}}\n"
        "CATALOG_MOVE_JOURNAL_BATCH = 2\n"
    )
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "kill_settings",
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(settings.BASE_DIR)]),
        "CATALOG_ADMIN_KILL_AT": point,
    }
    command = [sys.executable, "manage.py", "hive_ddl", "--metastore", metastore.name, DROP, "--execute"]
    return subprocess.run(
        [*command, "--reason", "kill-test", "--actor", "operator:kill-test"],
        cwd=settings.BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def journal(execution: Execution) -> list[str]:
    return list(execution.moves.order_by("pk").values_list("state", flat=True))


@pytest.mark.parametrize(("point", "committed"), [("move:3", False), ("committed", True)])
def test_a_process_killed_in_the_middle_of_a_batch_is_reconciled_fully_back_or_fully_moved(
    metastore: Metastore, warehouse: Path, tmp_path: Path, point: str, committed: bool
) -> None:
    # given
    with events_restored(metastore.alias):
        rows, tree = metastore_dump(metastore.alias, events=False), warehouse_tree(warehouse)
        plan = alter_preview_statement(metastore=metastore, statement=DROP)
        assert len(plan.moves) == 5
        deletes = [s for s in plan.steps if s.metastore_table == "PARTITIONS" and s.action == "delete"]
        dropped_ids = [p for step in deletes for p in step.params]
        killed = killed_drop(metastore, point, tmp_path)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        execution = Execution.objects.get(reason="kill-test")
        intended, moved = DirectoryMoveRecord.State.INTENDED, DirectoryMoveRecord.State.MOVED
        if committed:
            assert journal(execution) == [moved] * 5
        else:  # two marked done, the third moved but not marked, two never started: one planned batch of 5
            assert journal(execution) == [moved, moved, intended, intended, intended]
            assert [path_of(m.source).exists() for m in plan.moves] == [False, False, False, True, True]

        # when
        [result] = reconcile_executions(older_than=0)

        # then
        execution.refresh_from_db()
        sources_there = [path_of(m.source).exists() for m in plan.moves]
        trash_there = [path_of(m.destination).exists() for m in plan.moves]
        partitions_left = Partition.objects.using(metastore.alias).filter(pk__in=dropped_ids).count()
        if committed:
            assert (result.committed, execution.state) == (True, Execution.State.RECONCILED)
            assert (sources_there, trash_there, partitions_left) == ([False] * 5, [True] * 5, 0)
            assert set(journal(execution)) == {DirectoryMoveRecord.State.COMMITTED}
            assert execution.read_before_image()["deleted_rows"]["PARTITIONS"]  # revertible
        else:
            assert (result.committed, execution.state) == (False, Execution.State.FAILED)
            assert [m.action for m in result.moves] == ["moved back"] * 3 + ["never moved"] * 2
            assert set(journal(execution)) == {DirectoryMoveRecord.State.RESTORED}
            assert (metastore_dump(metastore.alias, events=False), warehouse_tree(warehouse)) == (rows, tree)
            assert not execution.captured_chunks.exists()
        assert reconcile_executions(older_than=0) == []
        if committed:  # the test's own cleanup: the drop undone as a steward would
            execute(revert_preview(execution=execution))
            assert (metastore_dump(metastore.alias, events=False), warehouse_tree(warehouse)) == (rows, tree)


def test_a_journaled_move_found_at_both_ends_is_named_and_left_alone(
    metastore: Metastore, warehouse: Path, tmp_path: Path
) -> None:
    """Killed after the third move; then a directory appears where the third was taken from: its data is in the
    trash and something new is at its place, so neither is moved, the execution stays RUNNING and says why."""
    # given
    with events_restored(metastore.alias):
        plan = alter_preview_statement(metastore=metastore, statement=DROP)
        killed = killed_drop(metastore, "move:3", tmp_path)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        path_of(plan.moves[2].source).mkdir(parents=True)

        # when
        [result] = reconcile_executions(older_than=0)

        # then
        execution = Execution.objects.get(reason="kill-test")
        assert (result.committed, execution.state) == (False, Execution.State.RUNNING)
        actions = {m.source: m.action for m in result.moves}
        assert actions[plan.moves[2].source] == "conflict: source exists, destination exists; left alone"
        assert path_of(plan.moves[2].destination).is_dir()
        # the operator moves the stray directory away and runs it again: now it settles
        path_of(plan.moves[2].source).rmdir()
        [again] = reconcile_executions(older_than=0)
        execution.refresh_from_db()
        assert (again.committed, execution.state) == (False, Execution.State.FAILED)
