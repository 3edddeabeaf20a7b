"""
``settle_stuck_jobs``: a job left RUNNING by a worker that is gone, and its request left EXECUTING, end in a final
state that matches the metastore (the execution's commit marker), with an audit record; an undecidable one waits.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone

from catalog_admin.selectors.metastores import Metastore
from operations import lifecycle
from operations.choices import ChangeRequestState, JobKind, JobState
from operations.ddl.parser import parse_alter
from operations.models import AuditRecord, ChangeRequest, Execution, Job, Notification
from operations.services.change_requests import change_request_create
from operations.services.jobs import run_job
from operations.services.stuck_jobs import settle_stuck_jobs
from tests.fixtures.operations import ProcessDied, crash_at, warehouse_tree

pytestmark = pytest.mark.parametrize("metastore_alias", ["hive31_pg", "hive_sqlite"], indirect=True)

RENAME = "ALTER TABLE sales.customers RENAME TO sales.clients"


def executing_request(metastore: Metastore) -> tuple[ChangeRequest, Job]:
    """An approved request whose job is queued (approval is covered by the lifecycle's tests)."""
    steward = User.objects.create_user("steward", "steward@example.com", "pw")
    steward.groups.add(Group.objects.get_or_create(name="steward")[0])
    request = change_request_create(user=steward, metastore=metastore.name, spec=parse_alter(RENAME))
    ChangeRequest.objects.filter(pk=request.pk).update(state=ChangeRequestState.EXECUTING)
    return request, Job.objects.create(kind=JobKind.ALTER, change_request=request)


def died_while_running(job: Job, monkeypatch: pytest.MonkeyPatch, point: str) -> None:
    crash_at(monkeypatch, point)
    with pytest.raises(ProcessDied):
        run_job(job.pk)
    monkeypatch.undo()


def test_a_job_whose_worker_died_before_executing_errors_and_can_be_resumed(metastore: Metastore) -> None:
    """No execution was started: nothing changed, so the job ends errored (audited) and its request stays executing:
    the job can be resumed (or cancelled, which ends the request failed)."""
    # given
    request, job = executing_request(metastore)
    Job.objects.filter(pk=job.pk).update(state=JobState.RUNNING, started_at=timezone.now() - timedelta(hours=1))

    # when
    [settled] = settle_stuck_jobs()

    # then
    assert (settled.job_id, settled.execution_id, settled.outcome) == (job.pk, None, "errored")
    assert settled.reason == "the worker stopped before it executed anything; resume it or cancel it"
    request.refresh_from_db()
    job.refresh_from_db()
    assert request.state == ChangeRequestState.EXECUTING
    assert (job.state, job.error) == (JobState.ERRORED, settled.reason)
    assert job.recent_log.lines[-1].message == f"Settled by reconcile_executions: {settled.reason}"
    audited = AuditRecord.objects.filter(request_id_ref=request.pk, actor="system:reconcile_executions")
    assert list(audited.values_list("action", "outcome")) == [("settle_job", "errored")]
    assert lifecycle.can_resume_job(job, None) and lifecycle.can_cancel_job(job, None)


def test_a_job_settled_errored_tells_the_requester_and_the_operators(metastore: Metastore, settings: Any) -> None:
    # given: e-mail on; an operator (staff) besides the steward
    settings.CATALOG_EMAIL_ENABLED = True
    User.objects.create_user("ops", "ops@example.com", "pw", is_staff=True)
    request, job = executing_request(metastore)
    Job.objects.filter(pk=job.pk).update(state=JobState.RUNNING, started_at=timezone.now() - timedelta(hours=1))

    # when
    settle_stuck_jobs()

    # then: queued for both, each for their own reason
    queued = Notification.objects.filter(request=request, outcome="errored")
    assert sorted(queued.values_list("recipient", "audience")) == [
        ("ops@example.com", "failed_jobs"), ("steward@example.com", "outcomes"),
    ]  # fmt: skip


def test_a_job_that_died_after_the_commit_succeeds_with_its_request(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The commit marker is there: the execution is reconciled, the request and the job end succeeded."""
    # given
    request, job = executing_request(metastore)
    died_while_running(job, monkeypatch, "committed")

    # when
    [settled] = settle_stuck_jobs(older_than=0)

    # then
    execution = Execution.objects.get(reason=f"change request #{request.pk}")
    assert (settled.execution_id, settled.outcome) == (execution.pk, "succeeded")
    request.refresh_from_db()
    job.refresh_from_db()
    assert (request.state, request.execution_id, execution.state) == ("succeeded", execution.pk, "reconciled")
    assert (job.state, job.progress, job.error) == (JobState.SUCCEEDED, 100, "")


def test_a_job_with_a_recent_sign_of_life_is_not_touched(metastore: Metastore, monkeypatch: pytest.MonkeyPatch) -> None:
    """A job that started less than the timeout ago may still be working: it is left alone."""
    # given
    request, job = executing_request(metastore)
    died_while_running(job, monkeypatch, "locked")

    # when
    settled = settle_stuck_jobs()

    # then
    assert settled == []
    request.refresh_from_db()
    assert (request.state, Job.objects.get().state) == (ChangeRequestState.EXECUTING, JobState.RUNNING)


def test_an_undecidable_job_and_a_dry_run_change_nothing(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """A dry run reports the verdict; when the metastore cannot answer, the job and its request wait."""
    # given
    request, job = executing_request(metastore)
    died_while_running(job, monkeypatch, "moved")
    tree = warehouse_tree(warehouse)

    # when
    dry = settle_stuck_jobs(older_than=0, dry_run=True)
    settings.METASTORE_CONFIGS = [c for c in settings.METASTORE_CONFIGS if c.name != metastore.name]
    undecided = settle_stuck_jobs(older_than=0)

    # then
    assert [(s.outcome, s.dry_run) for s in dry] == [("failed", True)]
    assert [s.outcome for s in undecided] == [None]
    assert undecided[0].reason.endswith(f"the metastore cannot be read: Metastore '{metastore.name}' was not found.")
    request.refresh_from_db()
    assert (request.state, Job.objects.get().state) == (ChangeRequestState.EXECUTING, JobState.RUNNING)
    assert Execution.objects.get().state == Execution.State.RUNNING
    assert warehouse_tree(warehouse) == tree
