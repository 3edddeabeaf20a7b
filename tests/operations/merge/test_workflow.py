"""
A merge as a change request on the target metastore (hive23_pg into hive31_pg): its plan is the merge preview, risk
high by the ``metastore_merged`` criterion, two approvals from other people, a stale preview refused naming what
changed, blocked merges refused at submit, bad input named; execution runs as a ``merge`` job.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import User

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.models import Database, Table, TableParam
from operations.merge.changes import merge_change
from operations.merge.estimate import DEFAULT_PARTITIONS_PER_SECOND
from operations.merge.jobs import progress_of
from operations.merge.request import MergeRequest, parse_location_rule
from operations.merge.workflow import merge_operation, merge_request_from_dict
from operations.models import AuditRecord, ChangeRequest, Job
from operations.services.change_requests import (
    change_request_approve,
    change_request_create,
    change_request_execute,
    change_request_revert,
    change_request_submit,
)

pytestmark = [pytest.mark.django_db, pytest.mark.matrix, pytest.mark.usefixtures("eager_jobs")]

SOURCE, TARGET = "hive23_pg", "hive31_pg"


def _warehouse(alias: str) -> str:
    return next(c.warehouse_location for c in settings.METASTORE_CONFIGS if c.name == alias)


def _request(target: str = TARGET, **changes: object) -> MergeRequest:
    rule = parse_location_rule(f"{_warehouse(SOURCE)}={_warehouse(target)}/imported_from_{SOURCE}")
    fields = {
        "source": SOURCE,
        "target": target,
        "databases": ("sales", "marketing"),
        "renames": (("sales", "sales_imported"), ("marketing", "marketing_imported")),
        "location_rules": (rule,),
        **changes,
    }
    return MergeRequest(**fields)  # type: ignore[arg-type]


def _submitted(people: dict[str, User], **changes: object) -> ChangeRequest:
    draft = change_request_create(user=people["steward"], operation=merge_operation(_request(**changes)), reason="one")
    return change_request_submit(request=draft, user=people["steward"])


def test_a_merge_request_lives_on_the_target_with_high_risk_and_two_approvals(people: dict[str, User]) -> None:
    """The request is on the target, carries the merge preview and its fingerprint, and needs two approvals."""
    # when
    request = _submitted(people)
    # then
    assert (request.metastore, request.state, request.risk) == (TARGET, "submitted", "high")
    assert request.required_approvals == 2
    assert [c["name"] for c in request.preview["criteria"]] == ["metastore_merged"]
    assert request.operation["kind"] == "merge" and request.operation["arriving"] == [
        "marketing_imported",
        "sales_imported",
    ]
    assert request.fingerprint == merge_change(_request()).fingerprint
    assert request.statement.startswith(f"MERGE METASTORE {SOURCE} INTO {TARGET} DATABASES marketing, sales")
    estimate = request.preview["estimate"]
    assert estimate["partitions"] == _rows(request, "PARTITIONS") > 0
    assert estimate["partitions_per_second"] == DEFAULT_PARTITIONS_PER_SECOND  # no merge job has run yet
    assert "CATALOG_MERGE_PARTITIONS_PER_SECOND" in estimate["basis"]


def test_four_eyes_the_requester_cannot_approve_and_two_others_approve(people: dict[str, User]) -> None:
    """Self-approval is refused; after two other approvers the request is approved, each decision audited."""
    # given
    request = _submitted(people)
    # when
    with pytest.raises(ApplicationError) as own:
        change_request_approve(request=request, user=people["steward"])
    change_request_approve(request=request, user=people["approver"])
    request = change_request_approve(request=request, user=people["approver2"])
    # then
    assert own.value.code in (ErrorCode.SELF_APPROVAL_FORBIDDEN, ErrorCode.PERMISSION_DENIED)
    assert request.state == "approved"
    actions = list(AuditRecord.objects.filter(request_id_ref=request.pk).values_list("action", "outcome"))
    assert actions[-2:] == [("approve", "approval recorded"), ("approve", "approved")]


def test_a_source_that_changed_since_the_preview_is_refused_as_stale(people: dict[str, User]) -> None:
    """A table parameter added in the source after submit changes TABLE_PARAMS' row count: approval is refused with
    stale_preview naming it, and nothing is recorded."""
    # given
    request = _submitted(people)
    table = Table.objects.using(SOURCE).filter(database__name="sales").order_by("pk").first()
    assert table is not None
    with allow_metastore_writes():  # rolled back after the test
        TableParam.objects.using(SOURCE).create(table=table, key="merge.test", value="x")
    # when
    with pytest.raises(ApplicationError) as error:
        change_request_approve(request=request, user=people["approver"])
    # then
    assert error.value.code == ErrorCode.STALE_PREVIEW
    assert {"label": "TABLE_PARAMS rows", "previewed": str(_rows(request, "TABLE_PARAMS")),
            "now": str(_rows(request, "TABLE_PARAMS") + 1)} in error.value.details["changed"]  # fmt: skip
    assert not request.approvals.exists()


def _rows(request: ChangeRequest, table: str) -> int:
    return next(t["rows"] for t in request.preview["tables"] if t["table"] == table)


def test_a_blocked_merge_cannot_be_submitted(people: dict[str, User]) -> None:
    """Without renames the databases exist in the target: submit is refused with the blocker, the draft stays."""
    # given
    draft = change_request_create(user=people["steward"], operation=merge_operation(_request(renames=())), reason="x")
    # when
    with pytest.raises(ApplicationError) as error:
        change_request_submit(request=draft, user=people["steward"])
    # then
    assert error.value.code == ErrorCode.HIVE_RULE_VIOLATION
    assert "already exists in 'hive31_pg'" in error.value.message
    assert error.value.details["rule"] == "merge:database_exists"
    draft.refresh_from_db()
    assert draft.state == "draft"


def test_only_stewards_request_merges(people: dict[str, User]) -> None:
    """An approver cannot create a merge request; nothing is stored."""
    # when
    with pytest.raises(ApplicationError) as error:
        change_request_create(user=people["approver"], operation=merge_operation(_request()))
    # then
    assert error.value.code == ErrorCode.PERMISSION_DENIED
    assert not ChangeRequest.objects.exists()


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"target": TARGET}, "source"),
        ({"source": SOURCE, "target": TARGET, "databases": 3}, "databases"),
        ({"source": SOURCE, "target": TARGET, "renames": ["sales"]}, "rename"),
        ({"source": SOURCE, "target": TARGET, "location_rules": ["/a"]}, "rule"),
    ],
)
def test_bad_payloads_are_refused_naming_the_field(payload: dict, field: str) -> None:
    """Each malformed part of a merge payload is invalid_parameter, naming it in the details."""
    # when
    with pytest.raises(ApplicationError) as error:
        merge_request_from_dict(payload)
    # then
    assert error.value.code == ErrorCode.INVALID_PARAMETER
    assert field in error.value.details or field in str(error.value.details.get("field"))


def _approved(people: dict[str, User], **changes: object) -> ChangeRequest:
    request = _submitted(people, **changes)
    change_request_approve(request=request, user=people["approver"])
    return change_request_approve(request=request, user=people["approver2"])


@pytest.mark.slow
def test_an_approved_merge_runs_as_a_job_and_its_revert_removes_it(
    people: dict[str, User], django_capture_on_commit_callbacks, merge_target
) -> None:
    """End to end, into a fresh 3.1 target (the merge commits): the job imports both databases with per-table
    progress; the revert request (same revert action as ALTERs) deletes them again."""
    # given
    target = merge_target("3.1.0")
    request = _approved(people, target=target)
    # when
    with django_capture_on_commit_callbacks(execute=True):
        request = change_request_execute(request=request, user=people["steward"])
    # then
    request.refresh_from_db()
    assert request.state == "succeeded", request.error
    assert Database.objects.using(target).filter(name__in=("sales_imported", "marketing_imported")).count() == 2
    assert Job.objects.get(change_request=request).recent_log.count
    # when
    revert = change_request_revert(request=request, user=people["steward"], reason="undo")
    revert = change_request_submit(request=revert, user=people["steward"])
    change_request_approve(request=revert, user=people["approver"])
    revert = change_request_approve(request=revert, user=people["approver2"])
    with django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=revert, user=people["steward"])
    # then
    request.refresh_from_db()
    assert request.state == "reverted"
    assert not Database.objects.using(target).filter(name__endswith="_imported").exists()


def test_execution_of_an_approved_merge_whose_source_changed_is_refused_as_stale(people: dict[str, User]) -> None:
    """Execute re-checks the plan: a parameter added in the source since approval refuses it, and no job is queued."""
    # given
    request = _approved(people)
    table = Table.objects.using(SOURCE).filter(database__name="marketing").order_by("pk").first()
    assert table is not None
    with allow_metastore_writes():  # rolled back after the test
        TableParam.objects.using(SOURCE).create(table=table, key="merge.test", value="x")
    # when
    with pytest.raises(ApplicationError) as error:
        change_request_execute(request=request, user=people["steward"])
    # then
    assert error.value.code == ErrorCode.STALE_PREVIEW
    request.refresh_from_db()
    assert request.state == "approved" and not Job.objects.exists()


@pytest.mark.parametrize(
    ("event", "line", "partitions"),
    [
        ({"table": "PARTITIONS", "done": 1500, "total": 2000}, "PARTITIONS: 1,500 of 2,000 row(s)", 1500),
        ({"table": "SDS", "done": 10, "total": 20, "partitions_done": 7}, "SDS: 10 of 20 row(s)", 7),
        ("published DBS and TBLS", "published DBS and TBLS", None),
        ({"message": "Data copy: 3 of 16 unit(s) to copy"}, "Data copy: 3 of 16 unit(s) to copy", None),
    ],
)
def test_reported_events_become_log_lines_and_partition_counts(event: object, line: str, partitions: int) -> None:
    """What the execution core reports per table is logged on the job, and counts partitions when it can."""
    assert progress_of(event) == (line, partitions)
