"""The change-request lifecycle through the services: four eyes, policy, stale previews, execution, revert, audit."""

from __future__ import annotations

import logging
import socket
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core import mail

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError
from catalog_admin.models import Table, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.ddl.parser import parse_alter
from operations.models import AuditRecord, Job, Notification
from operations.notifications import deliver_due_notifications
from operations.services.alter import alter_preview
from operations.services.audit import verify_audit_chain
from operations.services.change_requests import (
    change_request_approve,
    change_request_cancel,
    change_request_create,
    change_request_execute,
    change_request_refresh,
    change_request_reject,
    change_request_revert,
    change_request_submit,
)
from operations.views.display import check_freshness

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_jobs")]

RENAME = "ALTER TABLE sales.customers RENAME TO sales.clients"


def create(people: dict[str, User], metastore: Metastore, statement: str = RENAME, who: str = "steward"):
    return change_request_create(
        user=people[who], metastore=metastore.name, spec=parse_alter(statement), reason="tidy names"
    )


def test_steward_request_approved_by_another_runs_and_is_audited(
    metastore: Metastore, people: dict[str, User], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    # given
    request = change_request_submit(request=create(people, metastore), user=people["steward"])
    assert request.required_approvals == 2  # a managed rename moves data: high risk

    # when
    with django_capture_on_commit_callbacks(execute=True):
        change_request_approve(request=request, user=people["approver"], comment="ok")
        request = change_request_approve(request=request, user=people["approver2"], comment="ok too")
    with django_capture_on_commit_callbacks(execute=True):
        request = change_request_execute(request=request, user=people["steward"])

    # then
    request.refresh_from_db()
    assert request.state == "succeeded"
    assert request.execution.actual_counts == request.execution.expected_counts
    assert Table.objects.using(metastore.alias).filter(database__name="sales", name="clients").exists()
    assert Job.objects.get(change_request=request).progress == 100
    actions = list(AuditRecord.objects.filter(request_id_ref=request.pk).values_list("action", flat=True))
    assert actions == ["create", "submit", "approve", "approve", "execute", "finish"]
    assert verify_audit_chain() == []
    assert mail.outbox == []  # the transitions only queued their messages: the worker sends them
    deliver_due_notifications()
    assert any(f"#{request.pk} succeeded" in message.subject for message in mail.outbox)


def test_without_email_configured_a_transition_sends_nothing_and_logs_no_error(
    metastore: Metastore, people: dict[str, User], settings, caplog, django_capture_on_commit_callbacks
) -> None:
    # given: no EMAIL_URL/EMAIL_HOST (mail off), and an SMTP backend aimed at a loopback port nobody listens on
    settings.CATALOG_EMAIL_ENABLED = False
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        settings.EMAIL_HOST, settings.EMAIL_PORT = probe.getsockname()

    # when
    with caplog.at_level(logging.ERROR), django_capture_on_commit_callbacks(execute=True):
        change_request_submit(request=create(people, metastore), user=people["steward"])

    # then
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR] == []
    assert not Notification.objects.exists()


def test_nobody_approves_their_own_request_not_even_an_admin(metastore: Metastore, people: dict[str, User]) -> None:
    request = change_request_submit(request=create(people, metastore, who="admin"), user=people["admin"])

    with pytest.raises(ApplicationError) as error:
        change_request_approve(request=request, user=people["admin"])

    assert error.value.code == "self_approval_forbidden"
    assert "four-eyes" in error.value.message


def test_viewers_and_stewards_cannot_approve(metastore: Metastore, people: dict[str, User]) -> None:
    request = change_request_submit(request=create(people, metastore), user=people["steward"])
    for name in ("viewer", "steward"):
        with pytest.raises(ApplicationError) as error:
            change_request_approve(request=request, user=people[name])
        assert error.value.code == "permission_denied"


def test_an_unapproved_request_cannot_be_executed(metastore: Metastore, people: dict[str, User]) -> None:
    request = change_request_submit(request=create(people, metastore), user=people["steward"])
    change_request_approve(request=request, user=people["approver"])  # 1 of 2

    with pytest.raises(ApplicationError) as error:
        change_request_execute(request=request, user=people["steward"])

    assert error.value.code == "invalid_state"


def test_a_second_approval_by_the_same_approver_is_refused(metastore: Metastore, people: dict[str, User]) -> None:
    request = change_request_submit(request=create(people, metastore), user=people["steward"])
    change_request_approve(request=request, user=people["approver"])

    with pytest.raises(ApplicationError) as error:
        change_request_approve(request=request, user=people["approver"])

    assert error.value.code == "invalid_state"


def test_a_table_changed_after_the_preview_blocks_approval_until_refreshed(
    metastore: Metastore, people: dict[str, User]
) -> None:
    # given
    request = change_request_submit(
        request=create(people, metastore, "ALTER TABLE sales.customers SET TBLPROPERTIES ('team'='a')"),
        user=people["steward"],
    )
    table = Table.objects.on(metastore).get(database__name="sales", name="customers")
    with allow_metastore_writes():
        TableParam.objects.using(metastore.alias).create(table=table, key="changed_by_hive", value="1")

    # when / then
    with pytest.raises(ApplicationError) as error:
        change_request_approve(request=request, user=people["approver"])
    assert error.value.code == "stale_preview"
    request = change_request_refresh(request=request, user=people["steward"])
    assert change_request_approve(request=request, user=people["approver"]).state == "approved"


def test_a_plan_is_built_once_per_approval_round_and_rebuilt_only_at_execution(
    metastore: Metastore, people: dict[str, User], monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks
) -> None:
    """Issue 29: submitting and both approvals of an unchanged table reuse the stored plan (its state fingerprint is
    compared, no plan built), the approvals bind that plan, and execution rebuilds it once and runs it."""
    # given
    request = create(people, metastore, "ALTER TABLE sales.customers SET TBLPROPERTIES ('team'='a')", who="steward")
    built_at = request.planned_at
    builds = []
    original = alter_preview

    def counting(**kwargs):  # noqa: ANN003, ANN202 - the service's keyword arguments
        builds.append(kwargs["spec"])
        return original(**kwargs)

    monkeypatch.setattr("operations.services.alter_kind.alter_preview", counting)

    # when
    request = change_request_submit(request=request, user=people["steward"])
    for approver in ("approver", "approver2")[: request.required_approvals]:
        request = change_request_approve(request=request, user=people[approver])
    freshness = check_freshness(request)
    approved_builds = len(builds)
    with django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=request, user=people["steward"])

    # then
    assert approved_builds == 0
    assert freshness.checked and not freshness.stale
    assert request.planned_at == built_at is not None
    assert set(request.approvals.values_list("fingerprint", flat=True)) == {request.fingerprint}
    assert len(builds) >= 1  # execution re-checks against a plan built now
    request.refresh_from_db()
    assert request.state == "succeeded"


def test_rejection_needs_a_reason_and_ends_the_request(metastore: Metastore, people: dict[str, User]) -> None:
    request = change_request_submit(request=create(people, metastore), user=people["steward"])
    with pytest.raises(ApplicationError):
        change_request_reject(request=request, user=people["approver"], comment=" ")

    request = change_request_reject(request=request, user=people["approver"], comment="wrong table")

    assert request.state == "rejected"
    with pytest.raises(ApplicationError) as error:
        change_request_approve(request=request, user=people["approver2"])
    assert error.value.code == "invalid_state"


def test_cancel_only_by_the_requester(metastore: Metastore, people: dict[str, User]) -> None:
    request = create(people, metastore)
    with pytest.raises(ApplicationError):
        change_request_cancel(request=request, user=people["approver"])
    assert change_request_cancel(request=request, user=people["steward"]).state == "cancelled"


def test_blocked_statement_cannot_be_submitted(metastore: Metastore, people: dict[str, User]) -> None:
    request = create(people, metastore, "ALTER TABLE sales.customers RENAME TO sales.orders")

    with pytest.raises(ApplicationError) as error:
        change_request_submit(request=request, user=people["steward"])

    assert error.value.code == "hive_rule_violation"
    assert "already exists" in error.value.message


def test_revert_request_goes_through_approval_and_restores_the_table(
    metastore: Metastore, people: dict[str, User], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    # given
    request = change_request_submit(request=create(people, metastore), user=people["steward"])
    for name in ("approver", "approver2"):
        change_request_approve(request=request, user=people[name])
    with django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=request, user=people["steward"])
    request.refresh_from_db()

    # when
    revert = change_request_submit(
        request=change_request_revert(request=request, user=people["steward"]), user=people["steward"]
    )
    for name in ("approver", "approver2"):
        revert = change_request_approve(request=revert, user=people[name])
    with django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=revert, user=people["steward"])

    # then
    revert.refresh_from_db()
    request.refresh_from_db()
    assert revert.state == "succeeded"
    assert request.state == "reverted"
    assert Table.objects.using(metastore.alias).filter(database__name="sales", name="customers").exists()
    assert not Table.objects.using(metastore.alias).filter(database__name="sales", name="clients").exists()
