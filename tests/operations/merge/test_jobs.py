"""
The ``merge`` job through the one runner: a cancel requested while it copies is taken between two copy units (each
committed and journaled, invisible to Hive): the job ends cancelled, the request failed, nothing is published, and the
journal lets ``merge_resume`` finish it. (Before, a running merge could not be cancelled.)
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from catalog_admin.models import Database
from operations.merge.execute import merge_resume
from operations.models import AuditRecord, Job, MergeImport
from operations.services.change_requests import change_request_execute
from operations.services.jobs import job_cancel
from operations.spark.programs import merge as program
from tests.operations.merge.test_workflow import _approved

pytestmark = [pytest.mark.django_db, pytest.mark.matrix, pytest.mark.slow, pytest.mark.usefixtures("eager_jobs")]
IMPORTED = ("sales_imported", "marketing_imported")


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
    assert request.state == "failed" and "cancelled by steward" in request.error
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
