"""
The ``merge`` job through the one runner: a cancel requested while it copies is taken between two copy units (each
committed and journaled, invisible to Hive): the job ends cancelled, nothing is published, and the journal is kept with
the request executing: ``job_resume`` finishes it (issue 26: before, only a failed merge could be resumed through the
runner), or a second cancel discards it (the request fails) and ``merge_resume`` can still finish the journal.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from catalog_admin.models import Database
from operations.lifecycle import can_resume_job
from operations.merge.execute import merge_resume
from operations.models import AuditRecord, Job, MergeImport
from operations.services.change_requests import change_request_execute
from operations.services.jobs import job_cancel, job_resume
from operations.spark.programs import merge as program
from tests.operations.merge.test_workflow import _approved

pytestmark = [pytest.mark.django_db, pytest.mark.matrix, pytest.mark.slow, pytest.mark.usefixtures("eager_jobs")]
IMPORTED = ("sales_imported", "marketing_imported")


def cancelled_while_copying(people, capture, target, monkeypatch):  # noqa: ANN001, ANN201
    """An approved merge request executed as a job, cancelled while its first copy unit is written: the request, the
    real ``_copy_unit`` and the units it was called for."""
    request = _approved(people, target=target)
    copy_unit = program._copy_unit
    calls: list[int] = []

    def copying(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        if not calls:
            job_cancel(job=Job.objects.get(change_request=request), user=people["steward"])
        calls.append(1)
        return copy_unit(*args, **kwargs)

    monkeypatch.setattr(program, "_copy_unit", copying)
    with capture(execute=True):
        change_request_execute(request=request, user=people["steward"])
    monkeypatch.setattr(program, "_copy_unit", copy_unit)
    return request, calls


def test_a_cancelled_merge_resumes_through_job_resume_from_its_journal(
    people: dict[str, User], django_capture_on_commit_callbacks, merge_target, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cancelled job is resumable (its request still executing), and ``job_resume`` publishes the merge with the
    units it had copied skipped; the request succeeds."""
    # given
    target = merge_target("3.1.0")
    request, calls = cancelled_while_copying(people, django_capture_on_commit_callbacks, target, monkeypatch)
    job = Job.objects.get(change_request=request)
    request.refresh_from_db()
    assert (job.state, request.state, len(calls)) == ("cancelled", "executing", 1)
    assert can_resume_job(job, people["steward"]).ok

    # when
    with django_capture_on_commit_callbacks(execute=True):
        resumed = job_resume(job=job, user=people["steward"])

    # then
    resumed.refresh_from_db()
    request.refresh_from_db()
    assert (resumed.state, request.state) == ("succeeded", "succeeded"), resumed.error
    assert MergeImport.objects.get(target=target).state == MergeImport.State.PUBLISHED
    assert Database.objects.using(target).filter(name__in=IMPORTED).count() == 2


def test_a_running_merge_cancelled_stops_between_copy_units_and_resumes_from_its_journal(
    people: dict[str, User], django_capture_on_commit_callbacks, merge_target, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given: the cancel arrives while the first copy unit is written
    target = merge_target("3.1.0")
    request = _approved(people, target=target)
    copy_unit = program._copy_unit
    calls: list[int] = []

    def copying(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        if not calls:
            job_cancel(job=Job.objects.get(change_request=request), user=people["steward"])
        calls.append(1)
        return copy_unit(*args, **kwargs)

    monkeypatch.setattr(program, "_copy_unit", copying)

    # when
    with django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=request, user=people["steward"])

    # then: stopped after the unit it was writing, nothing published
    job = Job.objects.get(change_request=request)
    request.refresh_from_db()
    assert (job.kind, job.state, job.cancel_requested_by, job.committing_at) == ("merge", "cancelled", "steward", None)
    assert request.state == "executing", "kept for job_resume"

    # and when cancelled again, it is discarded
    job_cancel(job=job, user=people["admin"])
    request.refresh_from_db()
    assert request.state == "failed" and "cancelled by admin" in request.error
    assert not can_resume_job(Job.objects.get(pk=job.pk), people["steward"]).ok
    assert len(calls) == 1
    assert not Database.objects.using(target).filter(name__in=IMPORTED).exists()
    journal = MergeImport.objects.get(target=target)
    assert journal.state == MergeImport.State.FAILED and len(journal.completed) == 1
    assert AuditRecord.objects.filter(action="cancel_job", outcome="cancel requested").count() == 1

    # when: the journal resumes it
    monkeypatch.setattr(program, "_copy_unit", copy_unit)
    resumed = merge_resume(journal)

    # then
    assert resumed.state == MergeImport.State.PUBLISHED
    assert Database.objects.using(target).filter(name__in=IMPORTED).count() == 2
