"""
Jobs in worker processes: an execution is handed to the workers as a task of Django's Tasks API (a row in the
console's database) once its transaction commits; ``manage.py run_jobs`` (django-tasks-db's worker plus
housekeeping) takes it and runs it; a claimed job never runs twice; a scheduled request gets a task that waits for
its time (``run_after``); ``eager`` mode (tests only) runs the very same task function inline.
"""

from __future__ import annotations

import io
import os
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from catalog_admin.models import TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.ddl.parser import parse_alter
from operations.models import ChangeRequest, Job
from operations.services.change_requests import (
    change_request_approve,
    change_request_create,
    change_request_execute,
    change_request_submit,
)
from operations.services.jobs import run_job
from tests.fixtures.factories import table_row

pytestmark = pytest.mark.django_db
PROPERTIES = "ALTER TABLE sales.customers SET TBLPROPERTIES ('team'='crm')"
RUN_JOB = "operations.tasks.run_job_task"
START_DUE = "operations.tasks.start_due_requests_task"


@pytest.fixture(autouse=True)
def connections_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """django-tasks-db's worker closes "old" connections after each task, as Django does after a request; inside a
    test's transaction that would close the test's own connection (the test client skips it the same way)."""
    monkeypatch.setattr("django_tasks_db.management.commands.db_worker.close_old_connections", lambda: None)


def approved(people: dict[str, User], metastore: Metastore) -> ChangeRequest:
    request = change_request_create(user=people["steward"], metastore=metastore.name, spec=parse_alter(PROPERTIES))
    request = change_request_submit(request=request, user=people["steward"])
    for name in ("approver", "approver2")[: request.required_approvals]:
        request = change_request_approve(request=request, user=people[name])
    return request


def run_worker_once() -> str:
    out = io.StringIO()
    call_command("run_jobs", once=True, stdout=out)
    return out.getvalue()


def test_an_execution_is_a_task_in_the_database_that_a_worker_runs(
    metastore: Metastore, people: dict[str, User], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """Executing queues the job and, after commit, one task naming it; nothing runs in the web process. The worker
    claims the task, runs the job once and records which worker ran it."""
    # given
    request = approved(people, metastore)

    # when
    with django_capture_on_commit_callbacks(execute=True):
        request = change_request_execute(request=request, user=people["steward"])

    # then: queued, with its task waiting in the database
    job = Job.objects.get(change_request=request)
    assert (request.state, job.state, job.attempts) == ("executing", "queued", 0)
    [task] = DBTaskResult.objects.all()
    assert (task.task_path, task.status, task.args_kwargs) == (RUN_JOB, "READY", {"args": [job.pk], "kwargs": {}})

    # when: a worker runs
    run_worker_once()

    # then
    job.refresh_from_db()
    task.refresh_from_db()
    assert (job.state, job.attempts, task.status) == ("succeeded", 1, TaskResultStatus.SUCCESSFUL)
    assert job.worker.endswith(f":{os.getpid()}")
    assert task.return_value == "succeeded"
    assert ChangeRequest.objects.get(pk=request.pk).state == "succeeded"
    table_id = table_row(metastore, "sales", "customers").pk
    assert TableParam.objects.using(metastore.alias).get(table_id=table_id, key="team").value == "crm"


def test_a_claimed_job_is_not_run_again(metastore: Metastore, people: dict[str, User], warehouse: Path) -> None:
    """Two tasks for one job (a retried enqueue, two workers): the second finds the job claimed and does nothing."""
    # given
    request = change_request_execute(request=approved(people, metastore), user=people["steward"])
    job = Job.objects.get(change_request=request)

    # when
    first, second = run_job(job.pk), run_job(job.pk)

    # then
    assert (first.state, first.attempts) == ("succeeded", 1)
    assert (second.state, second.attempts, second.recent_log) == ("succeeded", 1, first.recent_log)


def test_a_scheduled_request_gets_a_task_that_waits_for_its_time(
    metastore: Metastore, people: dict[str, User], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """Scheduling enqueues the due check with ``run_after`` = the request's time; a worker leaves it until then, and
    once due it starts the request and runs its job."""
    # given
    at = timezone.now() + timedelta(hours=2)
    with django_capture_on_commit_callbacks(execute=True):
        request = change_request_execute(request=approved(people, metastore), user=people["steward"], at=at)
    [task] = DBTaskResult.objects.all()
    assert (task.task_path, task.run_after) == (START_DUE, at)

    # when: a worker looks before the time
    run_worker_once()

    # then
    task.refresh_from_db()
    assert task.status == "READY" and ChangeRequest.objects.get(pk=request.pk).state == "scheduled"

    # when: the time has come
    past = timezone.now() - timedelta(seconds=1)
    ChangeRequest.objects.filter(pk=request.pk).update(scheduled_for=past)
    DBTaskResult.objects.filter(pk=task.pk).update(run_after=past)
    with django_capture_on_commit_callbacks(execute=True):
        run_worker_once()  # the due check starts the request and enqueues its job's task
    run_worker_once()  # which the next pass runs

    # then
    task.refresh_from_db()
    assert task.status == TaskResultStatus.SUCCESSFUL
    assert ChangeRequest.objects.get(pk=request.pk).state == "succeeded"
    assert Job.objects.get(change_request=request).message == "Done"


def test_the_workers_housekeeping_starts_a_due_request_whose_task_was_lost(
    metastore: Metastore, people: dict[str, User], warehouse: Path
) -> None:
    """No task at all (scheduled before workers existed, say): the worker's housekeeping still starts it when due."""
    # given
    at = timezone.now() + timedelta(hours=1)
    request = change_request_execute(request=approved(people, metastore), user=people["steward"], at=at)
    ChangeRequest.objects.filter(pk=request.pk).update(scheduled_for=timezone.now() - timedelta(minutes=1))
    assert not DBTaskResult.objects.exists()

    # when
    out = run_worker_once()

    # then
    assert "Started 1 scheduled request(s)." in out
    assert ChangeRequest.objects.get(pk=request.pk).state == "executing"
    assert Job.objects.get(change_request=request).message == "Queued by its schedule"


def test_eager_mode_runs_the_same_task_when_the_transaction_commits(
    metastore: Metastore, people: dict[str, User], warehouse: Path, settings, django_capture_on_commit_callbacks
) -> None:
    """Tests only: the job's task function runs inline after commit, and no task row is written."""
    # given
    settings.CATALOG_JOBS_MODE = "eager"
    request = approved(people, metastore)

    # when
    with django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=request, user=people["steward"])

    # then
    job = Job.objects.get(change_request=request)
    assert (job.state, job.attempts) == ("succeeded", 1)
    assert not DBTaskResult.objects.exists()
