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
from operations.merge import jobs as merge_jobs
from operations.merge.execute import merge_resume
from operations.merge.reads import MetastoreReader
from operations.merge.revert import imported_rows
from operations.models import AuditRecord, Job, MergeImport
from operations.services.change_requests import (
    change_request_approve,
    change_request_execute,
    change_request_revert,
    change_request_submit,
)
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


def _published_with_revert_approved(people, capture, target):  # noqa: ANN001, ANN201
    """A merge request executed (published) into ``target``, and its revert request approved: both requests."""
    request = _approved(people, target=target)
    with capture(execute=True):
        change_request_execute(request=request, user=people["steward"])
    request.refresh_from_db()
    assert request.state == "succeeded", request.error
    revert = change_request_revert(request=request, user=people["steward"], reason="undo")
    revert = change_request_submit(request=revert, user=people["steward"])
    change_request_approve(request=revert, user=people["approver"])
    return request, change_request_approve(request=revert, user=people["approver2"])


def _imported_rows(target: str) -> dict[str, int]:
    merge = MergeImport.objects.filter(target=target).latest("created_at")
    tgt = MetastoreReader(target)
    tables = ("DBS", "TBLS", "PARTITIONS", "SDS", "PARTITION_PARAMS", "NOTIFICATION_LOG")
    counts = {t: tgt.scalar(f'SELECT COUNT(*) FROM "{t}" WHERE {imported_rows(merge, t, tgt)}') for t in tables[:-1]}
    return counts | {"NOTIFICATION_LOG": tgt.scalar('SELECT COUNT(*) FROM "NOTIFICATION_LOG"')}


def test_a_merge_revert_cancelled_before_its_transaction_changes_nothing_and_runs_again(
    people, django_capture_on_commit_callbacks, merge_target, monkeypatch
) -> None:
    """A cancel taken before the revert's one transaction (its point of no return): the job ends cancelled, the
    target keeps every imported row and event, the merge stays published and its request succeeded, the revert
    request is approved again; executed again, the revert removes exactly the imported rows, once."""
    # given: the cancel arrives while the revert is previewed again
    target = merge_target("3.1.0")
    request, revert = _published_with_revert_approved(people, django_capture_on_commit_callbacks, target)
    before = _imported_rows(target)
    plan = merge_jobs.change_request_plan

    def previewing(change_request):  # noqa: ANN001, ANN202
        job_cancel(job=Job.objects.get(change_request=change_request), user=people["steward"])
        return plan(change_request)

    monkeypatch.setattr(merge_jobs, "change_request_plan", previewing)
    # when
    with django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=revert, user=people["steward"])
    # then
    job = Job.objects.get(change_request=revert)
    revert.refresh_from_db()
    request.refresh_from_db()
    assert (job.kind, job.state, job.committing_at) == ("merge_revert", "cancelled", None)
    assert (revert.state, request.state) == ("approved", "succeeded")
    assert _imported_rows(target) == before and before["DBS"] == 2
    assert MergeImport.objects.filter(target=target).latest("created_at").state == MergeImport.State.PUBLISHED
    # when: executed again
    monkeypatch.setattr(merge_jobs, "change_request_plan", plan)
    with django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=revert, user=people["steward"])
    # then
    revert.refresh_from_db()
    request.refresh_from_db()
    assert (revert.state, request.state) == ("succeeded", "reverted"), revert.error
    after = _imported_rows(target)
    assert {t: n for t, n in after.items() if t != "NOTIFICATION_LOG"} == dict.fromkeys(
        after.keys() - {"NOTIFICATION_LOG"}, 0
    )
    assert after["NOTIFICATION_LOG"] == before["NOTIFICATION_LOG"] + 2 + before["TBLS"], (
        "one DROP_TABLE each, then DROP_DATABASE"
    )
    assert MergeImport.objects.filter(target=target).latest("created_at").state == MergeImport.State.REVERTED
