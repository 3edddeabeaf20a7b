"""
The jobs executing a request in one metastore transaction (``alter_jobs.run_request_execution``) cancel and resume
through the one runner, whatever their kind: a queued ``database`` or ``privilege`` job cancelled ends its request
failed with nothing executed; one that errored (the metastore's connection reset) leaves its request executing, and
``job_resume`` runs the approved plan. (The ``alter`` job's own cases: ``test_job_runner.py``.)
"""

from __future__ import annotations

from types import ModuleType

import pytest
from django.contrib.auth.models import User

from catalog_admin.models import Database
from catalog_admin.selectors.metastores import Metastore
from operations.choices import JobKind, JobState
from operations.ddl.parser import parse_alter
from operations.models import ChangeRequest, Execution, Job
from operations.services import database_jobs, privilege_kind
from operations.services.change_requests import (
    change_request_approve,
    change_request_create,
    change_request_execute,
    change_request_submit,
)
from operations.services.jobs import job_cancel, job_resume
from operations.services.privilege_kind import privilege_request_create

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_jobs", "warehouse")]

# The job kind -> the module whose executor its runner calls, and that executor's name there.
EXECUTORS: dict[str, tuple[ModuleType, str]] = {
    JobKind.DATABASE: (database_jobs, "database_execute"),
    JobKind.PRIVILEGE: (privilege_kind, "privilege_execute"),
}


def approved(kind: str, metastore: Metastore, people: dict[str, User]) -> ChangeRequest:
    steward = people["steward"]
    if kind == JobKind.DATABASE:
        spec = parse_alter("CREATE DATABASE job_lab")
        request = change_request_create(user=steward, metastore=metastore.name, spec=spec)
    else:
        statement = "GRANT SELECT ON TABLE sales.orders TO USER bob"
        request = privilege_request_create(user=steward, metastore=metastore.name, statement=statement)
    request = change_request_submit(request=request, user=steward)
    for name in ("approver", "approver2")[: request.required_approvals]:
        request = change_request_approve(request=request, user=people[name])
    return request


def executed(metastore: Metastore) -> bool:
    """Whether the statement of :func:`approved` reached the metastore."""
    return (
        Database.objects.using(metastore.alias).filter(name="job_lab").exists()
        or Execution.objects.filter(state=Execution.State.SUCCEEDED).exists()
    )


@pytest.mark.parametrize("kind", sorted(EXECUTORS))
def test_a_queued_request_job_cancelled_approves_its_request_again_with_nothing_executed(
    kind: str, metastore: Metastore, people: dict[str, User], django_capture_on_commit_callbacks
) -> None:
    # given
    request = approved(kind, metastore, people)
    with django_capture_on_commit_callbacks(execute=False):
        request = change_request_execute(request=request, user=people["steward"])
    job = Job.objects.get(change_request=request)
    assert (job.kind, job.state) == (kind, JobState.QUEUED)

    # when
    cancelled = job_cancel(job=job, user=people["steward"])

    # then
    request.refresh_from_db()
    assert cancelled.state == JobState.CANCELLED
    assert (request.state, request.execution) == ("approved", None)
    assert f"Job #{job.pk} was cancelled by steward before it changed anything" in request.error
    assert not executed(metastore)


@pytest.mark.parametrize("kind", sorted(EXECUTORS))
def test_an_errored_request_job_resumes_bound_to_the_approved_plan(
    kind: str,
    metastore: Metastore,
    people: dict[str, User],
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks,
) -> None:
    # given: the metastore's connection resets under the first attempt
    module, name = EXECUTORS[kind]
    execute = getattr(module, name)

    def broken(*args: object, **kwargs: object) -> Execution:
        raise ConnectionResetError("metastore connection reset")

    monkeypatch.setattr(module, name, broken)
    request = approved(kind, metastore, people)
    with django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=request, user=people["steward"])
    errored = Job.objects.get(change_request=request)
    assert (errored.state, errored.error) == ("errored", "ConnectionResetError: metastore connection reset")
    assert ChangeRequest.objects.get(pk=request.pk).state == "executing"
    monkeypatch.setattr(module, name, execute)

    # when
    with django_capture_on_commit_callbacks(execute=True):
        job_resume(job=errored, user=people["steward"])

    # then
    resumed = Job.objects.get(pk=errored.pk)
    request.refresh_from_db()
    assert (resumed.state, resumed.attempts, resumed.error) == ("succeeded", 2, "")
    assert request.state == "succeeded" and request.execution is not None
    assert executed(metastore)
