"""
ANALYZE as a job, wired (quick tier, no Spark): an approved ANALYZE request queues an ``analyze`` job running the
analyze program on every unit's listed files, with the approved plan; the job on Spark, from the queue to the swap,
is ``tests/witness/test_spark_analyze.py``.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from catalog_admin.selectors.metastores import Metastore
from operations.choices import JobState
from operations.ddl.parser import parse_alter
from operations.models import Job
from operations.services.change_requests import (
    change_request_approve,
    change_request_create,
    change_request_execute,
    change_request_submit,
)
from tests.fixtures.operations import path_of

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
