"""
The change-request API under ``/api/`` with tokens: the whole lifecycle, roles, errors, idempotency, jobs and audit.

Requests run on the PostgreSQL 3.1 metastore and on the MariaDB 2.3 one. Jobs run eagerly when the view's
transaction "commits" (``django_capture_on_commit_callbacks``); executions move real directories, so the tests that
execute use the ``warehouse`` fixture, which restores the warehouse afterwards.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from catalog_admin.auth.tokens import digest
from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Table, TableParam, Transaction
from catalog_admin.selectors.metastores import Metastore
from catalog_admin.tokens.models import ApiToken
from operations.models import Approval, AuditRecord, ChangeRequest, Execution, IdempotencyKey, Job
from operations.services.audit import verify_audit_chain
from tests.fixtures.factories import api_key, table_exists

ALIASES = ["hive31_pg", "hive23_my"]
on_metastores = pytest.mark.parametrize("metastore_alias", ALIASES, indirect=True)
pytestmark = pytest.mark.usefixtures("eager_jobs")

RENAME = "ALTER TABLE sales.customers RENAME TO sales.clients"  # managed: data moves, high risk, 2 approvals
PROPERTIES = "ALTER TABLE sales.customers SET TBLPROPERTIES ('team'='crm')"  # metadata only: 1 approval
ERROR_KEYS = {"code", "message", "details"}


def url(name: str, **kwargs: Any) -> str:
    return reverse(f"operations_api:{name}", kwargs=kwargs)


def command(pk: int, action: str) -> str:
    return url(f"change-request-{action}", pk=pk)


def post(client: APIClient, path: str, body: dict[str, Any] | None = None, key: str | None = None) -> Any:
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    return client.post(path, body or {}, format="json", **headers)


def ok(response: Any, status: int = 200) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    return response.json()


def error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == ERROR_KEYS
    assert body["code"] == code, body
    assert "Traceback" not in body["message"]
    return body


def create(client: APIClient, metastore: Metastore, statement: str = RENAME, **extra: Any) -> dict[str, Any]:
    body = {"statement": statement, "metastore": metastore.name, "reason": "tidy names", **extra}
    return ok(post(client, url("change-request-list"), body), 201)


def submitted(api: dict[str, APIClient], metastore: Metastore, statement: str = RENAME, who: str = "steward") -> int:
    pk = create(api[who], metastore, statement)["id"]
    assert ok(post(api[who], command(pk, "submit")))["state"] == "submitted"
    return pk


def approved(api: dict[str, APIClient], metastore: Metastore, statement: str = RENAME) -> int:
    pk = submitted(api, metastore, statement)
    for name in ("approver", "approver2"):
        body = ok(post(api[name], command(pk, "approve"), {"comment": "ok"}))
    assert body["state"] == "approved"
    return pk


def audit_actions(pk: int) -> list[str]:
    """The actions done on request ``pk`` (refused ones are in :func:`refusals`)."""
    records = AuditRecord.objects.filter(request_id_ref=pk).exclude(outcome="refused").order_by("id")
    return list(records.values_list("action", flat=True))


def refusals(pk: int) -> list[tuple[str, str]]:
    """``(action, error code)`` of every refused action on request ``pk``, as the audit log records them."""
    records = AuditRecord.objects.filter(request_id_ref=pk, outcome="refused").order_by("id")
    return [(r.action, r.details["code"]) for r in records]


# The lifecycle -------------------------------------------------------------------------------------------------------


@on_metastores
def test_a_statement_is_requested_approved_by_others_and_executed_as_a_job(
    metastore: Metastore, api: dict[str, APIClient], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """Create returns the preview; two other approvers approve; execute answers at once with a job to poll."""
    # given: a draft with its preview
    draft = create(api["steward"], metastore)
    assert draft["state"] == "draft"
    assert draft["metastore"] == metastore.name
    assert (draft["database"], draft["table"]) == ("sales", "customers")
    assert draft["statement"] == "ALTER TABLE `sales`.`customers` RENAME TO `sales`.`clients`"
    assert draft["operation"]["kind"] == "rename_table"
    assert draft["requester"] == "steward"
    assert draft["preview"]["risk"] == draft["risk"] == "high"
    assert draft["preview"]["executable"] is True
    assert draft["preview"]["fingerprint"] == draft["fingerprint"]
    assert {"field": "name", "before": "customers", "after": "clients"} in draft["preview"]["diff"]
    assert draft["preview"]["row_changes"] and draft["preview"]["moves"]
    assert draft["job"] is None and draft["execution"] is None
    assert draft["url"] == f"http://testserver{url('change-request-detail', pk=draft['id'])}"
    pk = draft["id"]

    # when: submitted, approved by two others, executed
    request = ok(post(api["steward"], command(pk, "submit")))
    assert (request["state"], request["required_approvals"], request["approvals_given"]) == ("submitted", 2, 0)
    request = ok(post(api["approver"], command(pk, "approve"), {"comment": "looks right"}))
    assert (request["state"], request["approvals_given"]) == ("submitted", 1)
    request = ok(post(api["approver2"], command(pk, "approve")))
    assert request["state"] == "approved"
    with django_capture_on_commit_callbacks(execute=True):
        started = ok(post(api["steward"], command(pk, "execute")), 202)
        job_url = started["job"]["url"]
        waiting = ok(api["viewer"].get(job_url))

    # then: the answer came before the job ran; the job then ran to the end
    assert started["state"] == "executing"
    assert started["job"]["state"] == "queued"
    assert (waiting["state"], waiting["progress"], waiting["done"]) == ("queued", 0, False)
    job = ok(api["viewer"].get(job_url))
    assert (job["state"], job["progress"], job["done"], job["error"]) == ("succeeded", 100, True, "")
    assert job["change_request"] == pk
    assert job["log"][0]["message"].startswith("Previewing ")  # the worker rebuilds the plan and binds it
    assert job["log"][-1]["message"].startswith("Done in")
    done = ok(api["viewer"].get(url("change-request-detail", pk=pk)))
    assert done["state"] == "succeeded"
    assert done["execution"]["state"] == "succeeded"
    assert done["execution"]["actual_counts"] == done["execution"]["expected_counts"]
    assert table_exists(metastore, "sales", "clients") and not table_exists(metastore, "sales", "customers")
    assert audit_actions(pk) == ["create", "submit", "approve", "approve", "execute", "finish"]
    assert verify_audit_chain() == []


@on_metastores
def test_a_structured_operation_gives_the_same_request_as_its_statement(
    metastore: Metastore, api: dict[str, APIClient]
) -> None:
    # given
    operation = {
        "kind": "set_tblproperties",
        "target": {"database": "sales", "table": "customers"},
        "properties": [["team", "crm"]],
    }

    # when
    structured = ok(
        post(api["steward"], url("change-request-list"), {"operation": operation, "metastore": metastore.name}), 201
    )
    typed = create(api["steward2"], metastore, PROPERTIES)

    # then
    assert (
        structured["statement"]
        == typed["statement"]
        == "ALTER TABLE `sales`.`customers` SET TBLPROPERTIES ('team'='crm')"
    )
    assert structured["operation"] == typed["operation"] == {**operation, "properties": [["team", "crm"]]}
    assert structured["fingerprint"] == typed["fingerprint"]
    assert structured["preview"]["diff"] == typed["preview"]["diff"]
    assert structured["risk"] == "low"
    assert structured["reason"] == ""


def test_a_structured_truncate_is_the_typed_statement_and_asks_two_approvals(
    metastore: Metastore, api: dict[str, APIClient]
) -> None:
    """``truncate_table`` with a partial spec: the same request as the typed TRUNCATE TABLE, high risk
    (``data_truncated``), two approvals by default."""
    # given
    operation = {
        "kind": "truncate_table",
        "target": {"database": "sales", "table": "orders"},
        "partition": [["dt", "2024-01-02"]],
    }

    # when
    structured = ok(
        post(api["steward"], url("change-request-list"), {"operation": operation, "metastore": metastore.name}), 201
    )
    typed = create(api["steward2"], metastore, "TRUNCATE TABLE sales.orders PARTITION (dt='2024-01-02')")

    # then
    assert (
        structured["statement"] == typed["statement"] == "TRUNCATE TABLE `sales`.`orders` PARTITION (`dt`='2024-01-02')"
    )
    assert structured["fingerprint"] == typed["fingerprint"]
    assert structured["risk"] == "high"
    assert "data_truncated" in [c["name"] for c in structured["preview"]["criteria"]]
    assert structured["required_approvals"] == 2


def test_the_default_metastore_is_used_when_none_is_named(api: dict[str, APIClient]) -> None:
    body = ok(post(api["steward"], url("change-request-list"), {"statement": PROPERTIES}), 201)

    assert body["metastore"] == settings.DEFAULT_METASTORE


@on_metastores
def test_a_succeeded_request_is_reverted_by_a_revert_request(
    metastore: Metastore, api: dict[str, APIClient], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """Revert creates a new draft that goes through submit, approval and execution like any other."""
    # given
    pk = approved(api, metastore)
    with django_capture_on_commit_callbacks(execute=True):
        ok(post(api["steward"], command(pk, "execute")), 202)

    # when
    revert = ok(post(api["steward"], command(pk, "revert"), {"reason": "undo"}), 201)
    path = url("change-request-detail", pk=revert["id"])
    other_operation = api["steward"].patch(path, {"statement": PROPERTIES}, format="json")
    edited = ok(api["steward"].patch(path, {"reason": "undo the rename"}, format="json"))
    ok(post(api["steward"], command(revert["id"], "submit")))
    for name in ("approver", "approver2"):
        ok(post(api[name], command(revert["id"], "approve")))
    with django_capture_on_commit_callbacks(execute=True):
        ok(post(api["steward"], command(revert["id"], "execute")), 202)

    # then
    assert revert["state"] == "draft"
    assert revert["revert_of"] == pk
    assert revert["operation"] == {
        "kind": "rename_table",
        "target": {"database": "sales", "table": "clients"},
        "new": {"database": "sales", "table": "customers"},
    }
    assert revert["reason"] == "undo"
    error(other_operation, 409, "invalid_state")
    assert (edited["reason"], edited["operation"], edited["revert_of"]) == ("undo the rename", revert["operation"], pk)
    assert ok(api["steward"].get(url("change-request-detail", pk=revert["id"])))["state"] == "succeeded"
    assert ok(api["steward"].get(url("change-request-detail", pk=pk)))["state"] == "reverted"
    assert table_exists(metastore, "sales", "customers") and not table_exists(metastore, "sales", "clients")
    error(post(api["steward"], command(pk, "revert")), 409, "invalid_state")


@on_metastores
def test_a_request_whose_revert_failed_can_be_reverted_again(
    metastore: Metastore, api: dict[str, APIClient], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """A revert attempt that failed (its execution FAILED: nothing changed) does not count as the revert: the
    request is offered Revert again and the API creates the revert request (it answered 409, "already reverted")."""
    # given
    pk = approved(api, metastore)
    with django_capture_on_commit_callbacks(execute=True):
        ok(post(api["steward"], command(pk, "execute")), 202)
    original = Execution.objects.get(pk=ChangeRequest.objects.get(pk=pk).execution_id)
    Execution.objects.create(
        metastore=original.metastore, database_name="sales", table_name="clients", statement="(revert)",
        operation={"kind": "revert_execution"}, preview={}, fingerprint="", actor="steward", source="api",
        state=Execution.State.FAILED, error="The process died before the metastore transaction committed",
        reverts=original,
    )  # fmt: skip

    # when
    offered = ok(api["steward"].get(url("change-request-detail", pk=pk)))["actions"]["revert"]
    revert = ok(post(api["steward"], command(pk, "revert"), {"reason": "undo"}), 201)

    # then
    assert offered["allowed"] is True
    assert (revert["state"], revert["revert_of"]) == ("draft", pk)


@on_metastores
def test_execute_with_a_time_schedules_the_request(metastore: Metastore, api: dict[str, APIClient]) -> None:
    # given
    pk = approved(api, metastore)
    at = timezone.now() + timedelta(hours=2)

    # when
    past = post(api["steward"], command(pk, "execute"), {"at": (timezone.now() - timedelta(hours=1)).isoformat()})
    scheduled = ok(post(api["steward"], command(pk, "execute"), {"at": at.isoformat()}))

    # then
    body = error(past, 400, "invalid_parameter")
    assert (body["message"], body["details"]) == (
        "Pick a time in the future, or execute now instead.",
        {"parameter": "at"},
    )
    assert scheduled["state"] == "scheduled"
    assert scheduled["job"] is None
    assert scheduled["scheduled_for"] == at.isoformat().replace("+00:00", "Z")
    assert not Job.objects.filter(change_request_id=pk).exists()


@on_metastores
def test_a_draft_is_edited_with_patch_by_its_requester_only(metastore: Metastore, api: dict[str, APIClient]) -> None:
    # given
    pk = create(api["steward"], metastore)["id"]
    path = url("change-request-detail", pk=pk)

    # when
    edited = ok(api["steward"].patch(path, {"statement": PROPERTIES}, format="json"))
    renamed_reason = ok(api["steward"].patch(path, {"reason": "for the CRM team"}, format="json"))
    other = api["steward2"].patch(path, {"reason": "mine now"}, format="json")
    moved = api["steward"].patch(path, {"metastore": "hive40_pg"}, format="json")
    ok(post(api["steward"], command(pk, "submit")))
    frozen = api["steward"].patch(path, {"reason": "too late"}, format="json")

    # then
    assert edited["operation"]["kind"] == "set_tblproperties"
    assert edited["risk"] == "low" and edited["required_approvals"] == 1
    assert edited["reason"] == "tidy names"
    assert renamed_reason["statement"] == edited["statement"]
    assert renamed_reason["reason"] == "for the CRM team"
    assert error(other, 403, "permission_denied")["message"] == f"Only the requester can edit request #{pk}."
    assert error(moved, 400, "invalid_parameter")["details"] == {"parameter": "metastore"}
    assert error(frozen, 409, "invalid_state")["details"]["state"] == "submitted"
    assert audit_actions(pk) == ["create", "edit", "edit", "submit"]
    assert refusals(pk) == [("edit", "permission_denied"), ("edit", "invalid_parameter"), ("edit", "invalid_state")]


@on_metastores
def test_a_request_is_cancelled_by_its_requester_only(metastore: Metastore, api: dict[str, APIClient]) -> None:
    pk = submitted(api, metastore)

    refused = post(api["approver"], command(pk, "cancel"))
    cancelled = ok(post(api["steward"], command(pk, "cancel")))
    again = post(api["steward"], command(pk, "cancel"))

    error(refused, 403, "permission_denied")
    assert cancelled["state"] == "cancelled"
    error(again, 409, "invalid_state")


# Roles and the four-eyes rule ------------------------------------------------------------------------------------


@on_metastores
def test_roles_decide_who_creates_and_who_approves(metastore: Metastore, api: dict[str, APIClient]) -> None:
    # given
    pk = submitted(api, metastore)

    # when / then: a viewer and an approver read but cannot request
    assert ok(api["viewer"].get(url("change-request-list")))["results"][0]["id"] == pk
    assert ok(api["viewer"].get(url("change-request-detail", pk=pk)))["id"] == pk
    body = error(post(api["viewer"], url("change-request-list"), {"statement": PROPERTIES}), 403, "permission_denied")
    assert body["message"] == "Only stewards can request changes."
    error(post(api["approver"], url("change-request-list"), {"statement": PROPERTIES}), 403, "permission_denied")
    # a viewer and another steward cannot approve
    for name in ("viewer", "steward2"):
        body = error(post(api[name], command(pk, "approve")), 403, "permission_denied")
        assert body["message"] == "Only approvers can approve or reject changes."
    # an approver can
    assert ok(post(api["approver"], command(pk, "approve")))["approvals_given"] == 1
    assert ChangeRequest.objects.count() == 1


@on_metastores
def test_nobody_approves_their_own_request_not_even_an_admin(metastore: Metastore, api: dict[str, APIClient]) -> None:
    # given: an admin (also steward and approver) submits a request
    pk = submitted(api, metastore, who="admin")

    # when
    approve = post(api["admin"], command(pk, "approve"), {"comment": "mine"})
    reject = post(api["admin"], command(pk, "reject"), {"comment": "mine"})

    # then
    for response in (approve, reject):
        body = error(response, 403, "self_approval_forbidden")
        assert body["message"] == "Nobody approves their own change (four-eyes rule)."
        assert body["details"] == {"request": pk}
    assert not Approval.objects.filter(request_id=pk).exists()
    assert ok(post(api["approver"], command(pk, "approve")))["approvals_given"] == 1


@on_metastores
def test_a_rejection_needs_a_comment_and_ends_the_request(metastore: Metastore, api: dict[str, APIClient]) -> None:
    pk = submitted(api, metastore)

    empty = post(api["approver"], command(pk, "reject"), {"comment": "  "})
    rejected = ok(post(api["approver"], command(pk, "reject"), {"comment": "wrong table"}))
    late = post(api["approver2"], command(pk, "approve"))

    assert error(empty, 400, "invalid_parameter")["details"] == {"field": "comment"}
    assert rejected["state"] == "rejected"
    error(late, 409, "invalid_state")
    approvals = ok(api["viewer"].get(command(pk, "approvals")))["results"]
    assert [(a["approver"], a["decision"], a["comment"], a["current"]) for a in approvals] == [
        ("approver", "reject", "wrong table", True)
    ]


@on_metastores
def test_a_rejected_request_is_revised_edited_and_submitted_again(
    metastore: Metastore, api: dict[str, APIClient]
) -> None:
    """revise: the requester only, a rejected request only; it becomes a draft with its rejection as a comment."""
    pk = submitted(api, metastore, PROPERTIES)
    ok(post(api["approver"], command(pk, "reject"), {"comment": "wrong owner"}))

    other = post(api["steward2"], command(pk, "revise"))
    revised = ok(post(api["steward"], command(pk, "revise")))
    again = post(api["steward"], command(pk, "revise"))
    edited = ok(api["steward"].patch(url("change-request-detail", pk=pk), {"reason": "the right owner"}, format="json"))
    resubmitted = ok(post(api["steward"], command(pk, "submit")))

    error(other, 403, "permission_denied")
    assert revised["state"] == "draft"
    error(again, 409, "invalid_state")
    assert (edited["reason"], resubmitted["state"]) == ("the right owner", "submitted")
    comments = ok(api["viewer"].get(command(pk, "comments")))["results"]
    assert [(c["author"], c["body"]) for c in comments] == [("approver", "Rejected before revision: wrong owner")]
    assert refusals(pk) == [("revise", "permission_denied"), ("revise", "invalid_state")]


# Refusals --------------------------------------------------------------------------------------------------------


@on_metastores
def test_transitions_out_of_order_are_invalid_state(metastore: Metastore, api: dict[str, APIClient]) -> None:
    # given
    pk = create(api["steward"], metastore)["id"]

    # when / then
    body = error(post(api["approver"], command(pk, "approve")), 409, "invalid_state")
    assert body["details"] == {"request": pk, "state": "draft", "action": "approve"}
    error(post(api["steward"], command(pk, "execute")), 409, "invalid_state")
    error(post(api["steward"], command(pk, "revert")), 409, "invalid_state")
    ok(post(api["steward"], command(pk, "submit")))
    error(post(api["steward"], command(pk, "submit")), 409, "invalid_state")
    ok(post(api["approver"], command(pk, "approve")))
    body = error(post(api["approver"], command(pk, "approve")), 409, "invalid_state")
    assert body["message"] == f"You already decided on request #{pk}."
    error(post(api["steward"], command(pk, "execute")), 409, "invalid_state")  # 1 of 2 approvals


@on_metastores
def test_a_table_changed_after_the_preview_is_stale_until_refreshed(
    metastore: Metastore, api: dict[str, APIClient]
) -> None:
    # given
    pk = submitted(api, metastore, PROPERTIES)
    table = Table.objects.on(metastore).get(database__name="sales", name="customers")
    with allow_metastore_writes():
        TableParam.objects.using(metastore.alias).create(table=table, key="changed_by_hive", value="1")

    # when
    stale = post(api["approver"], command(pk, "approve"))
    refused = post(api["approver"], command(pk, "refresh"))
    refreshed = ok(post(api["steward"], command(pk, "refresh")))
    approved = ok(post(api["approver"], command(pk, "approve")))

    # then
    body = error(stale, 409, "stale_preview")
    assert body["details"]["request"] == pk
    assert body["details"]["previewed_fingerprint"] != body["details"]["current_fingerprint"]
    error(refused, 403, "permission_denied")
    assert refreshed["fingerprint"] == body["details"]["current_fingerprint"]
    assert approved["state"] == "approved"


@on_metastores
def test_a_change_hive_forbids_is_refused_at_submit_with_the_rule(
    metastore: Metastore, api: dict[str, APIClient]
) -> None:
    # given: the preview shows the blocker
    draft = create(api["steward"], metastore, "ALTER TABLE sales.customers RENAME TO sales.orders")
    assert draft["preview"]["executable"] is False
    blocker = draft["preview"]["blockers"][0]

    # when
    body = error(post(api["steward"], command(draft["id"], "submit")), 422, "hive_rule_violation")

    # then
    assert body["details"]["rule"] == blocker["rule"]
    assert "already exists" in body["message"]


@on_metastores
def test_malformed_ddl_is_a_parse_error_pointing_at_the_position(
    metastore: Metastore, api: dict[str, APIClient]
) -> None:
    statement = "ALTER TABLE sales.customers\nRENAME INTO sales.clients"

    body = error(
        post(api["steward"], url("change-request-list"), {"statement": statement, "metastore": metastore.name}),
        400,
        "ddl_parse_error",
    )

    assert body["details"]["position"] == statement.index("INTO")
    assert (body["details"]["line"], body["details"]["column"]) == (2, 8)
    assert "ALTER TABLE [db.]t RENAME TO [db.]t2" in body["details"]["supported"]
    assert not ChangeRequest.objects.exists()


@pytest.mark.parametrize(
    ("body", "parameter", "message"),
    [
        ({}, "statement", "Give either statement (Hive DDL) or operation (structured), one of them."),
        ({"statement": RENAME, "operation": {"kind": "rename_table"}}, "operation", "not both."),
        (
            {"operation": {"kind": "drop_index", "target": {"database": "sales", "table": "x"}}},
            "operation",
            "not 'drop_index'",
        ),
        ({"operation": ["rename_table"]}, "operation", "must be an object"),
        (
            {"operation": {"kind": "rename_table", "target": {"database": "sales", "table": "orders"}}},
            "operation",
            "not a valid rename_table",
        ),
        (
            {
                "operation": {
                    "kind": "set_owner",
                    "target": {"database": "sales", "table": "orders"},
                    "principal_type": "CAT",
                    "principal": "x",
                }
            },
            "operation",
            "expected USER, ROLE or GROUP",
        ),
    ],
    ids=["neither", "both", "unknown-kind", "not-an-object", "missing-field", "bad-value"],
)
def test_malformed_operations_are_invalid_parameters(
    api: dict[str, APIClient], body: dict, parameter: str, message: str
) -> None:
    response = error(post(api["steward"], url("change-request-list"), body), 400, "invalid_parameter")

    assert response["details"]["parameter"] == parameter
    assert message in response["message"]


@on_metastores
def test_unknown_tables_metastores_requests_and_jobs_are_not_found(
    metastore: Metastore, api: dict[str, APIClient]
) -> None:
    table = post(
        api["steward"],
        url("change-request-list"),
        {"statement": "ALTER TABLE sales.nope SET OWNER USER x", "metastore": metastore.name},
    )
    database = post(
        api["steward"],
        url("change-request-list"),
        {"statement": "ALTER TABLE nodb.t SET OWNER USER x", "metastore": metastore.name},
    )
    unknown_metastore = post(
        api["steward"], url("change-request-list"), {"statement": PROPERTIES, "metastore": "atlantis"}
    )

    assert error(table, 404, "not_found")["details"] == {
        "kind": "table",
        "name": "sales.nope",
        "metastore": metastore.name,
    }
    assert error(database, 404, "not_found")["details"]["kind"] == "database"
    assert error(unknown_metastore, 404, "not_found")["details"] == {"kind": "metastore", "name": "atlantis"}
    error(api["viewer"].get(url("change-request-detail", pk=999_999)), 404, "not_found")
    error(post(api["approver"], command(999_999, "approve")), 404, "not_found")
    error(api["viewer"].get(url("job-detail", pk=999_999)), 404, "not_found")


# Comments -----------------------------------------------------------------------------------------------------------


@on_metastores
def test_comments_are_added_and_listed(metastore: Metastore, api: dict[str, APIClient]) -> None:
    pk = create(api["steward"], metastore)["id"]
    path = command(pk, "comments")

    first = ok(post(api["approver"], path, {"body": "Which team asked?"}), 201)
    ok(post(api["steward"], path, {"body": "  CRM  "}), 201)
    empty = post(api["viewer"], path, {"body": " "})
    listed = ok(api["viewer"].get(path))["results"]

    assert (first["author"], first["body"]) == ("approver", "Which team asked?")
    assert [(c["author"], c["body"]) for c in listed] == [("approver", "Which team asked?"), ("steward", "CRM")]
    assert error(empty, 400, "invalid_parameter")["details"] == {"field": "body"}
    assert audit_actions(pk) == ["create", "comment", "comment"]
    assert refusals(pk) == [("comment", "invalid_parameter")]


# Lists: filters and cursor pages ---------------------------------------------------------------------------------


@on_metastores
def test_change_requests_are_filtered(metastore: Metastore, api: dict[str, APIClient]) -> None:
    # given
    rename = submitted(api, metastore)  # high risk, steward, submitted
    props = create(api["steward2"], metastore, PROPERTIES)["id"]  # low risk, steward2, draft
    orders = create(api["steward2"], metastore, "ALTER TABLE marketing.clicks SET OWNER USER bob")["id"]

    def ids(**params: str) -> list[int]:
        return [r["id"] for r in ok(api["viewer"].get(url("change-request-list"), params))["results"]]

    # when / then
    assert ids() == [orders, props, rename]
    assert ids(state="submitted") == [rename]
    assert ids(state="draft", requester="steward2") == [orders, props]
    assert ids(requester="steward") == [rename]
    assert ids(database="marketing") == [orders]
    assert ids(risk="high") == [rename]
    assert ids(metastore=metastore.name, table="custom") == [props, rename]
    assert ids(metastore="elsewhere") == []
    body = error(api["viewer"].get(url("change-request-list"), {"state": "done"}), 400, "invalid_parameter")
    assert body["details"] == {"parameter": "state"}
    error(api["viewer"].get(url("change-request-list"), {"risk": "extreme"}), 400, "invalid_parameter")


@on_metastores
def test_change_requests_come_in_cursor_pages(metastore: Metastore, api: dict[str, APIClient]) -> None:
    # given
    created = [create(api["steward"], metastore, PROPERTIES)["id"] for _ in range(5)]

    # when
    pages, path, params = [], url("change-request-list"), {"page_size": 2, "state": "draft"}
    while path:
        page = ok(api["viewer"].get(path, params))
        pages.append(page)
        path, params = page["next"], {}

    # then
    assert [len(p["results"]) for p in pages] == [2, 2, 1]
    assert [r["id"] for p in pages for r in p["results"]] == sorted(created, reverse=True)
    assert "state=draft" in pages[1]["next"] and f"cursor={pages[1]['next_cursor']}" in pages[1]["next"]
    assert pages[-1]["next"] is None and pages[-1]["next_cursor"] is None
    assert "preview" not in pages[0]["results"][0]
    bad = api["viewer"].get(url("change-request-list"), {"cursor": "%%%"})
    assert error(bad, 400, "invalid_parameter")["details"] == {"parameter": "cursor"}
    error(api["viewer"].get(url("change-request-list"), {"page_size": 0}), 400, "invalid_parameter")


# Idempotency ----------------------------------------------------------------------------------------------------


@on_metastores
def test_a_create_retried_with_its_key_is_replayed_not_repeated(
    metastore: Metastore, api: dict[str, APIClient]
) -> None:
    # given
    body = {"statement": RENAME, "metastore": metastore.name}
    first = post(api["steward"], url("change-request-list"), body, key="create-1")

    # when
    again = post(
        api["steward"], url("change-request-list"), {"metastore": metastore.name, "statement": RENAME}, key="create-1"
    )
    other_body = post(api["steward"], url("change-request-list"), {**body, "reason": "other"}, key="create-1")
    other_user = post(api["steward2"], url("change-request-list"), body, key="create-1")

    # then
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true" and not first.has_header("Idempotent-Replayed")
    reused = error(other_body, 422, "idempotency_key_reused")
    assert reused["details"]["idempotency_key"] == "create-1"
    assert ok(other_user, 201)["requester"] == "steward2"
    assert ChangeRequest.objects.count() == 2
    assert audit_actions(first.json()["id"]) == ["create"]


@on_metastores
def test_a_command_retried_with_its_key_acts_once(metastore: Metastore, api: dict[str, APIClient]) -> None:
    # given
    pk = submitted(api, metastore)
    approve = command(pk, "approve")
    first = ok(post(api["approver"], approve, {"comment": "ok"}, key="approve-1"))

    # when
    replayed = post(api["approver"], approve, {"comment": "ok"}, key="approve-1")
    without_key = post(api["approver"], approve, {"comment": "ok"})
    mismatch = post(api["approver"], approve, {"comment": "changed my mind"}, key="approve-1")
    same_key_elsewhere = ok(post(api["approver"], command(pk, "comments"), {"body": "ok"}, key="approve-1"), 201)

    # then
    assert ok(replayed) == first and replayed["Idempotent-Replayed"] == "true"
    error(without_key, 409, "invalid_state")  # a new call without the key is a second approval: refused
    error(mismatch, 422, "idempotency_key_reused")
    assert same_key_elsewhere["body"] == "ok"
    assert Approval.objects.filter(request_id=pk).count() == 1
    assert audit_actions(pk) == ["create", "submit", "approve", "comment"]
    assert refusals(pk) == [("approve", "invalid_state")]  # the second approval; a replay runs nothing


@on_metastores
def test_a_refused_call_stores_nothing_under_its_key(metastore: Metastore, api: dict[str, APIClient]) -> None:
    # given: a statement that does not parse
    path = url("change-request-list")
    error(
        post(api["steward"], path, {"statement": "ALTER TABLE", "metastore": metastore.name}, key="k"),
        400,
        "ddl_parse_error",
    )

    # when: corrected, with the same key
    created = ok(post(api["steward"], path, {"statement": PROPERTIES, "metastore": metastore.name}, key="k"), 201)

    # then
    assert created["statement"].startswith("ALTER TABLE `sales`.`customers`")
    assert IdempotencyKey.objects.get(key="k").response_body == created
    too_long = post(api["steward"], path, {"statement": PROPERTIES}, key="x" * 256)
    assert error(too_long, 400, "invalid_parameter")["details"] == {"parameter": "Idempotency-Key"}


def test_a_key_older_than_its_ttl_is_a_new_key_and_the_worker_forgets_it(
    metastore: Metastore, api: dict[str, APIClient]
) -> None:
    # given: a create 25 hours ago and one just now, under two keys
    body = {"statement": RENAME, "metastore": metastore.name}
    path = url("change-request-list")
    first = ok(post(api["steward"], path, body, key="old"), 201)
    ok(post(api["steward"], path, {**body, "reason": "fresh"}, key="fresh"), 201)
    IdempotencyKey.objects.filter(key="old").update(created_at=timezone.now() - timedelta(hours=25))

    # when: the old key is used again with the same body
    again = post(api["steward"], path, body, key="old")

    # then: it acts again instead of replaying the first answer
    assert ok(again, 201)["id"] != first["id"] and not again.has_header("Idempotent-Replayed")

    # when: the key ages again and the worker runs
    IdempotencyKey.objects.filter(key="old").update(created_at=timezone.now() - timedelta(hours=25))
    out = io.StringIO()
    call_command("run_jobs", once=True, stdout=out)

    # then
    assert "Forgot 1 expired Idempotency-Key(s)." in out.getvalue()
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["fresh"]


# Authentication ---------------------------------------------------------------------------------------------------


def test_requests_without_a_valid_token_are_401(people: dict[str, User]) -> None:
    # given
    key, old, gone = (api_key(people["steward"]) for _ in range(3))
    wrong, expired, revoked, anonymous = APIClient(), APIClient(), APIClient(), APIClient()
    wrong.credentials(HTTP_AUTHORIZATION=f"Token {key[::-1]}")
    expired.credentials(HTTP_AUTHORIZATION=f"Token {old}")
    revoked.credentials(HTTP_AUTHORIZATION=f"Token {gone}")
    ApiToken.objects.filter(digest=digest(old)).update(expires=timezone.now())
    ApiToken.objects.filter(digest=digest(gone)).update(revoked=timezone.now())

    # when / then
    for path in (url("change-request-list"), url("audit-list"), url("job-detail", pk=1)):
        assert error(anonymous.get(path), 401, "not_authenticated")["message"] == (
            "Authentication credentials were not provided."
        )
        assert anonymous.get(path)["WWW-Authenticate"] == "Token"
        assert error(wrong.get(path), 401, "not_authenticated")["message"] == "Invalid token."
        assert error(expired.get(path), 401, "not_authenticated")["message"].startswith("Token has expired")
        assert error(revoked.get(path), 401, "not_authenticated")["message"].startswith("Token has been revoked")
    for client in (expired, revoked):
        error(post(client, url("change-request-list"), {"statement": PROPERTIES}), 401, "not_authenticated")
    assert not ChangeRequest.objects.exists()


# Audit ----------------------------------------------------------------------------------------------------------------


@on_metastores
def test_the_audit_log_is_listed_filtered_and_exported(metastore: Metastore, api: dict[str, APIClient]) -> None:
    # given
    first = submitted(api, metastore)
    second = create(api["steward2"], metastore, PROPERTIES)["id"]
    ok(post(api["approver"], command(first, "approve"), {"comment": "fine"}))

    # when
    listed = ok(api["viewer"].get(url("audit-list"), {"request": first}))
    by_actor = ok(api["viewer"].get(url("audit-list"), {"actor": "approver", "action": "approve"}))
    by_table = ok(api["viewer"].get(url("audit-list"), {"table": "customers", "page_size": 2}))
    csv_export = api["viewer"].get(url("audit-export"), {"format": "csv", "request": first})
    json_export = api["viewer"].get(url("audit-export"), {"format": "json", "actor": "steward2"})

    # then
    assert [r["action"] for r in listed["results"]] == ["approve", "submit", "create"]
    assert {r["request"] for r in listed["results"]} == {first}
    record = by_actor["results"][0]
    assert (record["actor"], record["action"], record["outcome"], record["request"]) == (
        "approver",
        "approve",
        "approval recorded",
        first,
    )
    assert record["details"] == {"comment": "fine", "approvals": 1}
    assert (record["metastore"], record["database"], record["table"]) == (metastore.name, "sales", "customers")
    assert len(record["hash"]) == 64
    assert ok(api["viewer"].get(record["url"])) == record
    assert len(by_table["results"]) == 2 and by_table["next_cursor"]
    assert csv_export.status_code == 200
    assert csv_export["Content-Type"] == "text/csv; charset=utf-8"
    assert csv_export["Content-Disposition"].startswith('attachment; filename="audit-')
    *rows, anchor = csv.DictReader(io.StringIO(csv_export.content.decode()))
    assert [row["action"] for row in rows] == ["create", "submit", "approve"]
    assert anchor["id"].startswith("# chain head ")
    assert json_export["Content-Type"] == "application/json"
    exported = json.loads(json_export.content)
    assert [(r["request_id_ref"], r["action"]) for r in exported["records"]] == [(second, "create")]
    head = AuditRecord.objects.order_by("id").last()
    assert (exported["chain_head"], exported["chain_count"]) == (head.hash, AuditRecord.objects.count())
    error(api["viewer"].get(url("audit-export"), {"format": "xml"}), 400, "invalid_parameter")
    error(api["viewer"].get(url("audit-list"), {"request": "first"}), 400, "invalid_parameter")


@on_metastores
def test_audit_records_cannot_be_written_through_the_api(metastore: Metastore, api: dict[str, APIClient]) -> None:
    # given
    create(api["admin"], metastore)
    record = AuditRecord.objects.get()
    before = list(AuditRecord.objects.values())
    paths = [url("audit-list"), url("audit-detail", pk=record.pk), url("audit-export")]

    # when / then
    for path in paths:
        for method in ("post", "put", "patch", "delete"):
            response = getattr(api["admin"], method)(path, {"actor": "mallory"}, format="json")
            assert error(response, 405, "method_not_allowed")["message"].startswith(f'Method "{method.upper()}"')
    assert list(AuditRecord.objects.values()) == before
    error(api["admin"].get(url("audit-detail", pk=record.pk + 1000)), 404, "not_found")


# OpenAPI ---------------------------------------------------------------------------------------------------------


def test_the_openapi_schema_documents_the_change_request_api(api: dict[str, APIClient], tmp_path: Path) -> None:
    # when
    response = api["viewer"].get(reverse("api:schema"), {"format": "json"})
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))

    # then
    assert response.status_code == 200
    schema = response.json()
    paths = schema["paths"]
    expected = {
        "/api/change-requests/": {"get", "post"},
        "/api/change-requests/{id}/": {"get", "patch"},
        **{f"/api/change-requests/{{id}}/{action}/": {"post"}
           for action in ("submit", "refresh", "approve", "reject", "execute", "cancel", "revert")},
        "/api/change-requests/{id}/approvals/": {"get"},
        "/api/change-requests/{id}/comments/": {"get", "post"},
        "/api/jobs/{id}/": {"get"},
        "/api/audit/": {"get"},
        "/api/audit/{id}/": {"get"},
        "/api/audit/export/": {"get"},
    }  # fmt: skip
    for path, methods in expected.items():
        assert set(paths[path]) == methods, path
        for method in methods:
            operation = paths[path][method]
            assert operation["responses"]["401"]["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/Error"
            }, (path, method)
            assert {"tokenAuth": []} in operation["security"]
            if method in ("post", "patch"):
                assert any(p["name"] == "Idempotency-Key" and p["in"] == "header" for p in operation["parameters"])
    listing = {p["name"] for p in paths["/api/change-requests/"]["get"]["parameters"]}
    assert {"state", "database", "requester", "risk", "cursor", "page_size"} <= listing
    assert {"202", "200", "409", "422"} <= set(paths["/api/change-requests/{id}/execute/"]["post"]["responses"])
    approve = paths["/api/change-requests/{id}/approve/"]["post"]["responses"]["403"]["description"]
    assert "self_approval_forbidden" in approve
    assert "self_approval_forbidden" in schema["components"]["schemas"]["Error"]["properties"]["code"]["description"]
    assert "fingerprint" in schema["components"]["schemas"]["Preview"]["properties"]


# The transactional statements (issue 12) with risk and events (issue 14) ----------------------------------------------


@pytest.mark.parametrize(
    "metastore_alias", ["hive31_pg", pytest.param("hive40_pg", marks=pytest.mark.matrix)], indirect=True
)
def test_an_abort_of_transactions_is_high_risk_plans_abort_txn_events_and_needs_two_approvals(
    api: dict[str, APIClient], metastore: Metastore
) -> None:
    """The API's preview of ABORT TRANSACTIONS names 'transactions_aborted' (high), plans one ABORT_TXN per transaction
    (Hive 3.1/4.0), and the default policy holds it until a second approver agrees."""
    # given
    ids = sorted(Transaction.objects.on(metastore).filter(state="o").values_list("id", flat=True))
    statement = f"ALTER TABLE ops.job_runs_acid ABORT TRANSACTIONS {' '.join(map(str, ids))}"

    # when
    pk = submitted(api, metastore, statement)
    once = ok(post(api["approver"], command(pk, "approve"), {"comment": "ok"}))
    twice = ok(post(api["approver2"], command(pk, "approve"), {"comment": "ok"}))

    # then
    preview = ok(api["viewer"].get(url("change-request-detail", pk=pk)))["preview"]
    assert preview["risk"] == "high"
    assert preview["events"]["counts"] == {"ABORT_TXN": len(ids)} and preview["events"]["transactions"] == ids
    assert [c["name"] for c in preview["criteria"]] == ["transactions_aborted"]
    assert "cannot be reverted" in preview["criteria"][0]["explanation"]
    assert (once["state"], twice["state"]) == ("submitted", "approved")


@pytest.mark.parametrize(
    "metastore_alias", ["hive31_pg", pytest.param("hive40_pg", marks=pytest.mark.matrix)], indirect=True
)
def test_a_compaction_request_is_low_risk_writes_no_event_and_needs_one_approval(
    api: dict[str, APIClient], metastore: Metastore
) -> None:
    """COMPACT previews as low with its 'compaction_requested' note and no event; one approval suffices."""
    # when
    pk = submitted(api, metastore, "ALTER TABLE ops.job_runs_acid PARTITION (dt='2024-01-02', hour=6) COMPACT 'major'")
    once = ok(post(api["approver"], command(pk, "approve"), {"comment": "ok"}))

    # then
    preview = ok(api["viewer"].get(url("change-request-detail", pk=pk)))["preview"]
    assert preview["risk"] == "low" and preview["events"] is None and preview["blockers"] == []
    assert [c["name"] for c in preview["criteria"]] == ["compaction_requested"]
    assert once["state"] == "approved"
