"""
Fault injection: the worker executing an approved request dies at every step of the journal (before the first
move, after the moves, between statements, just before the commit, just after it), with and without a change
"Hive" makes to the table after the crash; then ``reconcile_executions`` and ``settle_stuck_jobs`` run.

Whatever the step, the metastore and the directories end fully old (exactly as before the request) or fully new
(exactly as a normal execution leaves them), never mixed, and the request and its job end in a final state that
says which. The reference "new" state comes from a normal execution of the same plan, rolled back afterwards.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.db import transaction

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Table, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.choices import ChangeRequestState, JobKind, JobState
from operations.ddl.parser import parse_alter
from operations.models import AuditRecord, ChangeRequest, Execution, Job
from operations.services.alter import alter_preview_statement
from operations.services.change_requests import change_request_create
from operations.services.jobs import run_job
from operations.services.reconcile import reconcile_executions
from operations.services.stuck_jobs import settle_stuck_jobs
from tests.fixtures.operations import ProcessDied, crash_at, execute, metastore_state, warehouse_tree

STATEMENTS = {
    "rename": "ALTER TABLE sales.orders RENAME TO marketing.orders_v2",
    "rename_partition": (
        "ALTER TABLE sales.orders PARTITION (dt='2024-01-02', hour=3) RENAME TO PARTITION (dt='2024-02-01', hour=3)"
    ),
    "drop_partitions": "ALTER TABLE sales.orders DROP PARTITION (hour >= 6)",
    "set_owner": "ALTER TABLE sales.orders SET OWNER USER bob",  # no directory moves
}
POINTS = {"locked": "old", "moved": "old", "step:1": "old", "before_commit": "old", "committed": "new"}
OUTSIDE_KEY = "last_modified_by"

# An exhaustive matrix (statements x crash points x outside changes): the full suite runs it, the quick tier does not.
pytestmark = [
    pytest.mark.parametrize("metastore_alias", ["hive31_pg", "hive_sqlite", "hive40_my"], indirect=True),
    pytest.mark.slow,
]


def restore_warehouse(root: Path) -> None:
    """Put the warehouse back from the ``warehouse`` fixture's copy."""
    shutil.rmtree(root)
    shutil.copytree(root.parent / f"{root.name}.backup", root, symlinks=True)


def new_state(metastore: Metastore, warehouse: Path, statement: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The metastore and the warehouse as a normal execution of ``statement`` leaves them (then undone)."""
    with transaction.atomic(using=metastore.alias):
        execute(alter_preview_statement(metastore=metastore, statement=statement))
        state = metastore_state(metastore.alias), warehouse_tree(warehouse)
        transaction.set_rollback(True, using=metastore.alias)
    restore_warehouse(warehouse)
    return state


def executing_request(metastore: Metastore, statement: str) -> tuple[ChangeRequest, Job]:
    """An approved request whose job is queued (the approval itself is covered by the lifecycle's tests)."""
    steward = User.objects.create_user("steward", "steward@example.com", "pw")
    steward.groups.add(Group.objects.get_or_create(name="steward")[0])
    request = change_request_create(user=steward, metastore=metastore.name, spec=parse_alter(statement))
    ChangeRequest.objects.filter(pk=request.pk).update(state=ChangeRequestState.EXECUTING)
    return request, Job.objects.create(kind=JobKind.ALTER, change_request=request)


def change_table_as_hive(metastore: Metastore, table_id: int, present: bool) -> None:
    """Someone else sets (or removes) a parameter of the table, as a Hive client could at any time."""
    params = TableParam.objects.using(metastore.alias).filter(table_id=table_id, key=OUTSIDE_KEY)
    with allow_metastore_writes():
        if present:
            TableParam.objects.using(metastore.alias).create(table_id=table_id, key=OUTSIDE_KEY, value="hive")
        else:
            params.delete()


@pytest.mark.parametrize("outside_change", [False, True], ids=["alone", "hive_changed_the_table"])
@pytest.mark.parametrize("point", list(POINTS))
@pytest.mark.parametrize("statement", list(STATEMENTS))
def test_a_worker_killed_at_any_step_ends_fully_old_or_fully_new(
    metastore: Metastore,
    warehouse: Path,
    monkeypatch: pytest.MonkeyPatch,
    statement: str,
    point: str,
    outside_change: bool,
) -> None:
    """Killed before the commit: everything is as before and the request and job failed. Killed after it: everything
    is as a normal execution leaves it and both succeeded. A parameter Hive set meanwhile changes neither verdict."""
    # given
    old = metastore_state(metastore.alias), warehouse_tree(warehouse)
    new = new_state(metastore, warehouse, STATEMENTS[statement])
    assert (metastore_state(metastore.alias), warehouse_tree(warehouse)) == old
    table_id = Table.objects.using(metastore.alias).get(database__name="sales", name="orders").pk
    request, job = executing_request(metastore, STATEMENTS[statement])
    crash_at(monkeypatch, point)
    with pytest.raises(ProcessDied):
        run_job(job.pk)
    monkeypatch.undo()
    if outside_change:
        change_table_as_hive(metastore, table_id, present=True)

    # when
    executions = reconcile_executions(older_than=0)
    jobs = settle_stuck_jobs(older_than=0)

    # then
    if outside_change:
        assert TableParam.objects.using(metastore.alias).filter(table_id=table_id, key=OUTSIDE_KEY).exists()
        change_table_as_hive(metastore, table_id, present=False)
    expected = POINTS[point]
    assert (metastore_state(metastore.alias), warehouse_tree(warehouse)) == (old if expected == "old" else new)
    execution = Execution.objects.get(reason=f"change request #{request.pk}")
    assert [(r.execution_id, r.committed) for r in executions] == [(execution.pk, expected == "new")]
    outcome = "succeeded" if expected == "new" else "failed"
    job_state = JobState.SUCCEEDED if expected == "new" else JobState.FAILED
    assert [(s.job_id, s.outcome) for s in jobs] == [(job.pk, outcome)]
    request.refresh_from_db()
    job.refresh_from_db()
    assert (request.state, request.execution_id) == (outcome, execution.pk)
    assert (job.state, job.finished_at is not None) == (job_state, True)
    assert execution.state == (Execution.State.RECONCILED if expected == "new" else Execution.State.FAILED)
    assert set(AuditRecord.objects.filter(request_id_ref=request.pk).values_list("action", flat=True)) >= {
        "settle",
        "settle_job",
    }
    assert reconcile_executions(older_than=0) == [] and settle_stuck_jobs(older_than=0) == []
