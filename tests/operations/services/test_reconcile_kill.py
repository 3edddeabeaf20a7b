"""
Recovery from a real ``kill -9``: ``manage.py hive_ddl … --execute`` runs in a separate process that SIGKILLs itself
at a fault point (the test-only hook in ``operations.services.alter.fault_point``: ``CATALOG_ADMIN_KILL_AT``), while
"Hive" edits the table's ``TABLE_PARAMS`` afterwards; then ``reconcile_executions`` runs in the test's process.

Killed after the moves or just before the commit, the metastore transaction dies with its connection: the metastore
and the directories end fully old. Killed just after the commit: fully new (exactly as a normal execution leaves
them). Never mixed, and the execution ends FAILED or RECONCILED. ``test_reconcile_faults.py`` covers every fault point
with a simulated crash; this module proves the simulation is what a dead process really leaves behind.

The killed process commits to the console's database and to the metastore, so the tests commit too
(``transaction=True``). The console's database is flushed after each test (``restore_roles`` puts the role groups
back), the ``warehouse`` fixture puts the directories back, and ``restored_metastore`` puts a committed rename back
(the inverse rename) and proves the whole metastore is as before.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connections, transaction

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Table, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.models import DirectoryMoveRecord, Execution
from operations.services.alter import alter_preview_statement
from operations.services.reconcile import reconcile_executions
from tests.fixtures.operations import events_restored, execute, metastore_dump, metastore_state, warehouse_tree

STATEMENT = "ALTER TABLE sales.orders RENAME TO marketing.orders_v2"
INVERSE = "ALTER TABLE marketing.orders_v2 RENAME TO sales.orders"
POINTS = {"moved": "old", "before_commit": "old", "committed": "new"}
OUTSIDE_KEY = "last_modified_by"
ALIASES = ["hive31_pg", "hive_sqlite"]

# A real process per test (about two seconds each): the full suite runs them, the quick tier does not.
pytestmark = [
    pytest.mark.parametrize("metastore_alias", ALIASES, indirect=True),
    pytest.mark.django_db(transaction=True, databases=["default", *ALIASES]),
    pytest.mark.usefixtures("restore_roles"),
    pytest.mark.slow,
]


@pytest.fixture
def restored_metastore(metastore: Metastore, warehouse: Path) -> Iterator[dict[str, list[tuple[Any, ...]]]]:
    """The metastore's dump before the test; afterwards a committed rename is renamed back (committed) and the whole
    metastore must equal the dump again (else it is rebuilt from scratch and the test fails)."""
    before = metastore_state(metastore.alias)
    with events_restored(metastore.alias):
        yield before
        if Table.objects.using(metastore.alias).filter(database__name="marketing", name="orders_v2").exists():
            execute(alter_preview_statement(metastore=metastore, statement=INVERSE))
    if metastore_dump(metastore.alias, events=False) != _without_events(before):  # renamed back: two more events
        from tests.fixtures.metastores import build_metastores, official_schema_map

        build_metastores({metastore.alias: official_schema_map()[metastore.alias]})
        pytest.fail(f"the test left {metastore.alias} changed: it was rebuilt")


def _without_events(state: dict[str, Any]) -> dict[str, Any]:
    return {table: rows for table, rows in state.items() if table != "NOTIFICATION_LOG (rows)"}


def new_state(metastore: Metastore, warehouse: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """The metastore and the warehouse as a normal execution of ``STATEMENT`` leaves them (then undone)."""
    backup = warehouse.parent / f"{warehouse.name}.backup"  # the ``warehouse`` fixture's copy
    with transaction.atomic(using=metastore.alias):
        execute(alter_preview_statement(metastore=metastore, statement=STATEMENT))
        state = metastore_state(metastore.alias), warehouse_tree(warehouse)
        transaction.set_rollback(True, using=metastore.alias)
    shutil.rmtree(warehouse)
    shutil.copytree(backup, warehouse, symlinks=True)
    return state


def killed_hive_ddl(metastore: Metastore, point: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``manage.py hive_ddl STATEMENT --execute`` in its own process on the test databases, killed at ``point``."""
    # tests.settings names the console database as it was before Django's test runner renamed it (test_…).
    name = connections["default"].settings_dict["NAME"]
    (tmp_path / "kill_settings.py").write_text(
        f"from tests.settings import *\nDATABASES['default'] = {{**DATABASES['default'], 'NAME': {name!r}}}\n"
    )
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "kill_settings",
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(settings.BASE_DIR)]),
        "CATALOG_ADMIN_KILL_AT": point,
    }
    command = [sys.executable, "manage.py", "hive_ddl", "--metastore", metastore.name, STATEMENT, "--execute"]
    return subprocess.run(
        [*command, "--reason", "kill-test", "--actor", "operator:kill-test"],
        cwd=settings.BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def change_table_as_hive(metastore: Metastore, table_id: int, present: bool) -> None:
    """Someone else sets (or removes) a parameter of the table, as a Hive client could at any time (committed)."""
    with allow_metastore_writes(), transaction.atomic(using=metastore.alias):
        params = TableParam.objects.using(metastore.alias).filter(table_id=table_id, key=OUTSIDE_KEY)
        if present:
            TableParam.objects.using(metastore.alias).create(table_id=table_id, key=OUTSIDE_KEY, value="hive")
        else:
            params.delete()


@pytest.mark.parametrize("point", list(POINTS))
def test_a_process_killed_with_sigkill_is_reconciled_fully_old_or_fully_new(
    metastore: Metastore,
    warehouse: Path,
    restored_metastore: dict[str, list[tuple[Any, ...]]],
    tmp_path: Path,
    point: str,
) -> None:
    """Killed before the commit: the metastore and the directories are exactly as before, and the execution FAILED.
    Killed after it: they are exactly as a normal execution leaves them, and the execution RECONCILED. A parameter
    Hive set on the table after the crash changes neither verdict, and stays."""
    # given
    old = restored_metastore, warehouse_tree(warehouse)
    new = new_state(metastore, warehouse)
    assert (metastore_state(metastore.alias), warehouse_tree(warehouse)) == old
    table_id = Table.objects.using(metastore.alias).get(database__name="sales", name="orders").pk
    killed = killed_hive_ddl(metastore, point, tmp_path)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    execution = Execution.objects.get(reason="kill-test")
    assert execution.state == Execution.State.RUNNING
    assert list(execution.moves.values_list("state", flat=True)) == [DirectoryMoveRecord.State.MOVED]
    change_table_as_hive(metastore, table_id, present=True)

    # when
    results = reconcile_executions(older_than=0)

    # then
    expected = POINTS[point]
    assert [(r.execution_id, r.committed) for r in results] == [(execution.pk, expected == "new")]
    assert TableParam.objects.using(metastore.alias).filter(table_id=table_id, key=OUTSIDE_KEY).exists()
    change_table_as_hive(metastore, table_id, present=False)
    assert (metastore_state(metastore.alias), warehouse_tree(warehouse)) == (old if expected == "old" else new)
    execution.refresh_from_db()
    assert execution.state == (Execution.State.RECONCILED if expected == "new" else Execution.State.FAILED)
    assert execution.finished_at is not None
    assert set(execution.moves.values_list("state", flat=True)) == {
        DirectoryMoveRecord.State.COMMITTED if expected == "new" else DirectoryMoveRecord.State.RESTORED
    }
    assert reconcile_executions(older_than=0) == []
