"""
ANALYZE as a job, wired (quick tier, no Spark): an approved ANALYZE request queues an ``analyze`` job running the
analyze program on every unit's listed files, with the approved plan; the data jobs' runner refuses a stale plan
before the program starts, and the job cancels and resumes as every data job does; the job on Spark, from the queue
to the swap, is ``tests/witness/test_spark_analyze.py``.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django_tasks_db.models import DBTaskResult

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Partition, StorageDescriptor
from catalog_admin.selectors.metastores import Metastore
from operations.choices import JobState
from operations.ddl.parser import parse_alter
from operations.models import ChangeRequest, Execution, Job
from operations.services import data_jobs
from operations.services.change_requests import (
    change_request_approve,
    change_request_create,
    change_request_execute,
    change_request_submit,
)
from operations.services.jobs import job_cancel, job_resume, run_job
from tests.fixtures.factories import table_row
from tests.fixtures.operations import path_of
from tests.operations.services.test_analyze import in_process

pytestmark = [pytest.mark.django_db]
STATEMENT = "ANALYZE TABLE sales.orders PARTITION (dt='2024-01-02') COMPUTE STATISTICS FOR COLUMNS id, status"


def test_executing_an_approved_analyze_queues_the_analyze_program_with_its_plan(
    metastore: Metastore, people: dict[str, User], django_capture_on_commit_callbacks
) -> None:
    """An ``analyze`` job: the program, every unit's visible files, the table's and the analyzed columns, the
    approved plan; nothing is written before it runs."""
    # given
    request = change_request_create(user=people["steward"], metastore=metastore.name, spec=parse_alter(STATEMENT))
    request = change_request_submit(request=request, user=people["steward"])
    for name in ("approver", "approver2")[: request.required_approvals]:
        request = change_request_approve(request=request, user=people[name])

    # when
    with django_capture_on_commit_callbacks(execute=False):
        request = change_request_execute(request=request, user=people["steward"])

    # then
    job = Job.objects.get(change_request=request)
    assert (request.state, job.kind, job.program, job.state) == ("executing", "analyze", "analyze", JobState.QUEUED)
    plan = job.plan
    assert plan["analyzed"] == [["id", "bigint"], ["status", "string"]]
    assert [c[0] for c in plan["columns"]] == ["id", "customer_id", "amount", "status"]
    for unit in plan["units"]:
        on_disk = sorted(str(p) for p in path_of(unit["source"]).iterdir()) if path_of(unit["source"]).is_dir() else []
        assert sorted(path_of(f["source"]).as_posix() for f in unit["files"]) == on_disk
    assert plan["approved"]["fingerprint"] == request.fingerprint


def approved_analyze(people: dict[str, User], metastore: Metastore, capture) -> tuple[ChangeRequest, Job]:  # noqa: ANN001
    request = change_request_create(user=people["steward"], metastore=metastore.name, spec=parse_alter(STATEMENT))
    request = change_request_submit(request=request, user=people["steward"])
    for name in ("approver", "approver2")[: request.required_approvals]:
        request = change_request_approve(request=request, user=people[name])
    with capture(execute=True):
        request = change_request_execute(request=request, user=people["steward"])
    return request, Job.objects.get(change_request=request)


def test_an_analyze_whose_table_changed_since_approval_reads_nothing(
    metastore: Metastore, people: dict[str, User], django_capture_on_commit_callbacks
) -> None:
    """The data jobs' runner previews again before the program starts: a partition re-pointed meanwhile fails the
    job and the request as stale, with no driver started and no execution."""
    # given
    request, job = approved_analyze(people, metastore, django_capture_on_commit_callbacks)
    orders = table_row(metastore, "sales", "orders")
    name = job.plan["units"][0]["key"]
    sd_id = Partition.objects.using(metastore.alias).get(table_id=orders.id, name=name).sd_id
    with allow_metastore_writes():
        StorageDescriptor.objects.using(metastore.alias).filter(pk=sd_id).update(location="file:/elsewhere/moved")

    # when
    ran = run_job(job.pk)

    # then
    request.refresh_from_db()
    assert (ran.state, ran.driver_pid, request.state) == (JobState.FAILED, None, "failed")
    assert "changed since the approved preview" in ran.error
    assert "nothing was read or written" in ran.error
    assert not Execution.objects.exists()


def test_cancelling_a_failed_analyze_approves_the_request_again_with_nothing_swapped(
    metastore: Metastore, people: dict[str, User], django_capture_on_commit_callbacks
) -> None:
    """A driver failed half-way (one unit analyzed): cancelling the job discards it through the same runner as the
    other data jobs; it wrote nothing to the data's directories, so there is nothing to remove, and the request is
    approved again (executable within the same approvals) with no execution."""
    # given
    request, job = approved_analyze(people, metastore, django_capture_on_commit_callbacks)
    Job.objects.filter(pk=job.pk).update(state=JobState.FAILED, completed=[job.plan["units"][0]["key"]])

    # when
    cancelled = job_cancel(job=job, user=people["steward"])

    # then
    request.refresh_from_db()
    assert cancelled.state == JobState.CANCELLED
    assert (request.state, request.execution) == ("approved", None)
    assert f"Job #{job.pk} was cancelled by steward before it changed anything" in request.error
    assert "staging" not in job.plan
    assert not Execution.objects.exists()


def test_a_failed_analyze_resumes_through_the_runner_with_its_verified_units(
    metastore: Metastore, people: dict[str, User], django_capture_on_commit_callbacks
) -> None:
    """Resume queues the failed analyze again for a worker, its verified units kept for the program to skip."""
    # given
    request, job = approved_analyze(people, metastore, django_capture_on_commit_callbacks)
    first = job.plan["units"][0]["key"]
    Job.objects.filter(pk=job.pk).update(state=JobState.FAILED, completed=[first])

    # when
    with django_capture_on_commit_callbacks(execute=True):
        resumed = job_resume(job=job, user=people["steward"])

    # then
    request.refresh_from_db()
    assert (resumed.state, resumed.completed, request.state) == (JobState.QUEUED, [first], "executing")
    assert DBTaskResult.objects.count() == 2  # the first run's task and the resumed one


def test_an_approved_analyze_runs_through_the_data_jobs_runner_to_its_swap(
    metastore: Metastore, people: dict[str, User], monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks
) -> None:
    """The program (here in the worker's own process instead of a Spark driver) analyzes every unit, the runner
    passes its point of no return, the statistics are swapped as the request's execution, and the job's result and
    log say what was analyzed and swapped."""
    # given
    monkeypatch.setattr(data_jobs, "run_spark_program", lambda handle: in_process(handle.job.plan))
    request, job = approved_analyze(people, metastore, django_capture_on_commit_callbacks)

    # when
    ran = run_job(job.pk)

    # then
    request.refresh_from_db()
    assert (ran.state, request.state) == (JobState.SUCCEEDED, "succeeded")
    assert ran.committing_at is not None
    assert ran.result["execution"] == request.execution.pk
    assert ran.result["units"] == len(job.plan["units"])
    log = list(ran.log_entries.values_list("message", flat=True))
    assert any(line.startswith(f"Analyzed {len(job.plan['units'])} unit(s)") for line in log)
    assert f"Swapped the statistics as execution #{request.execution.pk}" in log
