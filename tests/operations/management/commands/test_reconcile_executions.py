"""
``manage.py reconcile_executions``: prints what it did (or, with ``--dry-run``, what it would do) for every
execution a dying process left running, and for every stuck job.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command

from catalog_admin.selectors.metastores import Metastore
from operations.choices import ChangeRequestState, JobKind
from operations.ddl.parser import parse_alter
from operations.models import ChangeRequest, Execution, Job
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.change_requests import change_request_create
from operations.services.jobs import run_job
from tests.fixtures.operations import ProcessDied, crash_at

pytestmark = pytest.mark.parametrize("metastore_alias", ["hive31_pg", "hive40_my"], indirect=True)


def reconcile(*args: str) -> str:
    out = io.StringIO()
    call_command("reconcile_executions", *args, stdout=out)
    return out.getvalue()


def crash(metastore: Metastore, monkeypatch: pytest.MonkeyPatch, statement: str, point: str) -> Execution:
    plan = alter_preview_statement(metastore=metastore, statement=statement)
    crash_at(monkeypatch, point)
    with pytest.raises(ProcessDied):
        alter_execute(preview=plan, actor="operator:test", source="cli")
    monkeypatch.undo()
    return Execution.objects.get(statement=plan.statement)


def test_nothing_to_do_is_said_so(metastore: Metastore) -> None:
    """Without stranded executions the command says there is nothing to reconcile."""
    # given / when / then
    assert reconcile() == "No execution needs reconciling.\n"


def test_dry_run_then_run_print_each_verdict_and_move(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dry run announces the move back and the commit; the real run does them and prints the new states."""
    # given
    rolled_back = crash(metastore, monkeypatch, "ALTER TABLE sales.customers RENAME TO ops.customers", "moved")
    committed = crash(metastore, monkeypatch, "ALTER TABLE sales.orders RENAME TO sales.orders_v2", "committed")
    source, moved_to = (warehouse / "sales.db" / "customers", warehouse / "ops.db" / "customers")
    orders, orders_v2 = (warehouse / "sales.db" / "orders", warehouse / "sales.db" / "orders_v2")

    # when
    dry = reconcile("--dry-run")
    done = reconcile()

    # then
    assert dry == (
        f"#{rolled_back.pk} [{metastore.name}] {rolled_back.statement}\n"
        "  never committed (no commit marker in the metastore): directories would be moved back, "
        "execution would be FAILED\n"
        f"  file:{moved_to} -> file:{source}: would be moved back\n"
        f"#{committed.pk} [{metastore.name}] {committed.statement}\n"
        "  committed (its commit marker is in the metastore): journal would be marked COMMITTED, "
        "execution would be RECONCILED\n"
        f"  file:{orders} -> file:{orders_v2}: kept (committed)\n"
    )
    assert done == (
        f"#{rolled_back.pk} [{metastore.name}] {rolled_back.statement}\n"
        "  never committed (no commit marker in the metastore): directories moved back, "
        "execution FAILED\n"
        f"  file:{moved_to} -> file:{source}: moved back\n"
        "  state: failed\n"
        f"#{committed.pk} [{metastore.name}] {committed.statement}\n"
        "  committed (its commit marker is in the metastore): journal marked COMMITTED, "
        "execution RECONCILED\n"
        f"  file:{orders} -> file:{orders_v2}: kept (committed)\n"
        "  state: reconciled\n"
    )
    assert (source.is_dir(), moved_to.exists(), orders_v2.is_dir()) == (True, False, True)
    assert reconcile() == "No execution needs reconciling.\n"


def test_a_stuck_job_and_its_execution_without_moves_are_settled_and_printed(
    metastore: Metastore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--older-than 0: the execution (no directory moved) fails from its missing marker, then its job and request."""
    # given
    steward = User.objects.create_user("steward", "steward@example.com", "pw")
    steward.groups.add(Group.objects.get_or_create(name="steward")[0])
    spec = parse_alter("ALTER TABLE sales.customers SET OWNER USER bob")
    request = change_request_create(user=steward, metastore=metastore.name, spec=spec)
    ChangeRequest.objects.filter(pk=request.pk).update(state=ChangeRequestState.EXECUTING)
    job = Job.objects.create(kind=JobKind.ALTER, change_request=request)
    crash_at(monkeypatch, "before_commit")
    with pytest.raises(ProcessDied):
        run_job(job.pk)
    monkeypatch.undo()
    execution = Execution.objects.get()

    # when
    young = reconcile()
    done = reconcile("--older-than", "0")

    # then
    assert young == "No execution needs reconciling.\n"
    assert done == (
        f"#{execution.pk} [{metastore.name}] {execution.statement}\n"
        "  never committed (no commit marker in the metastore): nothing to move back, execution FAILED\n"
        "  state: failed\n"
        f"job #{job.pk} (request #{request.pk}): failed (the worker stopped; execution #{execution.pk} failed)\n"
    )
    request.refresh_from_db()
    assert (request.state, Job.objects.get().state) == ("failed", "failed")
