"""
Rewrites as Spark jobs, wired (quick tier, no Spark): an approved CONCATENATE request queues a relocate-kind job
running the rewrite program, with its plan (every unit's files, the table's columns, the target size), the hidden
staging directory and the approved plan; discarding it after a failed half-run removes the staging and only that,
and swaps nothing. The job on Spark: ``tests/operations/services/test_rewrite_jobs_spark.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.urls import reverse
from rest_framework.test import APIClient

from catalog_admin.selectors.metastores import Metastore
from operations.choices import JobState
from operations.ddl.parser import parse_alter
from operations.models import ChangeRequest, Job
from operations.services.change_requests import (
    change_request_approve,
    change_request_create,
    change_request_execute,
    change_request_submit,
)
from operations.services.jobs import job_cancel
from tests.fixtures.factories import partition_locations, table_row
from tests.fixtures.operations import path_of
from tests.operations.services.test_rewrite import DAY, ORDERS, split_into_small_files

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("warehouse")]
STATEMENT = "ALTER TABLE sales.orders PARTITION (dt='2024-01-02') CONCATENATE"


def executed(people: dict[str, User], metastore: Metastore, capture) -> tuple[ChangeRequest, Job]:  # noqa: ANN001
    request = change_request_create(user=people["steward"], metastore=metastore.name, spec=parse_alter(STATEMENT))
    request = change_request_submit(request=request, user=people["steward"])
    for name in ("approver", "approver2")[: request.required_approvals]:
        request = change_request_approve(request=request, user=people[name])
    with capture(execute=True):
        request = change_request_execute(request=request, user=people["steward"])
    return request, Job.objects.get(change_request=request)


def test_executing_an_approved_concatenate_queues_the_rewrite_program_with_its_plan(
    metastore: Metastore, people: dict[str, User], django_capture_on_commit_callbacks
) -> None:
    """A relocate-kind job running the rewrite program: every unit's visible files, the table's columns, the target
    file size, the hidden staging directory (not there yet) and the approved plan."""
    # given
    split_into_small_files(metastore, "sales.orders", DAY, "parquet", ORDERS)

    # when
    request, job = executed(people, metastore, django_capture_on_commit_callbacks)

    # then
    assert (request.state, job.kind, job.program, job.state) == ("executing", "compact", "rewrite", JobState.QUEUED)
    plan = job.plan
    (staging,) = plan["staging"]
    assert "/_compacted-" in staging and not path_of(staging).exists()
    assert plan["approved"]["fingerprint"] == request.fingerprint
    assert plan["columns"] == [list(c) for c in ORDERS]
    assert plan["target_file_bytes"] == settings.CATALOG_COMPACT_TARGET_FILE_BYTES
    assert all(u["destination"] == f"{staging}/{u['key']}" for u in plan["units"])
    assert all(u["source_format"] == u["target_format"] == "parquet" for u in plan["units"])
    assert sum(len(u["files"]) for u in plan["units"]) == request.preview["data_copy"]["files"]


def test_discarding_a_failed_rewrite_removes_its_staging_and_swaps_nothing(
    metastore: Metastore, people: dict[str, User], django_capture_on_commit_callbacks
) -> None:
    """Half the units written, the driver failed: cancelling the job removes the hidden staging directory; the
    partitions still point at their old files and the request is approved again (nothing was swapped)."""
    # given
    split_into_small_files(metastore, "sales.orders", DAY, "parquet", ORDERS)
    request, job = executed(people, metastore, django_capture_on_commit_callbacks)
    orders = table_row(metastore, "sales", "orders")
    before = partition_locations(metastore, orders.id)
    partial = path_of(job.plan["units"][0]["destination"])
    partial.mkdir(parents=True)
    (partial / "part-00000.parquet").write_bytes(b"half")
    Job.objects.filter(pk=job.pk).update(state=JobState.FAILED, completed=[job.plan["units"][0]["key"]])

    # when
    cancelled = job_cancel(job=job, user=people["steward"])

    # then
    assert cancelled.state == JobState.CANCELLED
    assert not any(path_of(staging).exists() for staging in job.plan["staging"])
    assert partition_locations(metastore, orders.id) == before
    assert all(path_of(loc).exists() for n, loc in before.items() if n.startswith(DAY + "/"))
    request.refresh_from_db()
    assert (request.state, request.execution) == ("approved", None)


def test_the_staging_is_below_the_table_root_and_hidden(metastore: Metastore) -> None:
    """Hive's and Spark's listings skip names starting with '_': MSCK and readers never see the new directories."""
    # given
    split_into_small_files(metastore, "sales.orders", DAY, "parquet", ORDERS)
    from operations.services.alter import alter_preview_statement

    # when
    preview = alter_preview_statement(metastore=metastore, statement=STATEMENT)

    # then
    root = table_row(metastore, "sales", "orders").sd.location
    (staging,) = preview.inverse["staging"]
    assert staging.startswith(root + "/_") and Path(staging).name.startswith("_compacted-")


def test_the_api_takes_a_structured_compaction_and_refuses_a_bad_option(
    metastore: Metastore, api: dict[str, APIClient]
) -> None:
    """``compact_files`` with its options creates the same request as its Hive text; a size of 0 is an
    invalid_parameter naming the option, and nothing is created."""
    # given
    split_into_small_files(metastore, "sales.orders", DAY, "parquet", ORDERS)
    operation = {
        "kind": "compact_files",
        "target": {"database": "sales", "table": "orders"},
        "partitions": [{"key": "dt", "op": "=", "value": "2024-01-02"}],
        "target_file_bytes": 1048576,
    }
    path = reverse("operations_api:change-request-list")

    # when
    created = api["steward"].post(path, {"operation": operation, "metastore": metastore.name}, format="json")
    refused = api["steward"].post(
        path, {"operation": {**operation, "target_file_bytes": 0}, "metastore": metastore.name}, format="json"
    )

    # then
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["statement"] == (
        "ALTER TABLE `sales`.`orders` PARTITION (`dt`='2024-01-02') CONCATENATE WITH ('target_file_bytes'='1048576')"
    )
    assert body["operation"]["target_file_bytes"] == 1048576 and body["preview"]["data_copy"]["units"] > 0
    assert refused.status_code == 400
    assert refused.json()["code"] == "invalid_parameter" and "target_file_bytes" in refused.json()["message"]
    assert ChangeRequest.objects.count() == 1
