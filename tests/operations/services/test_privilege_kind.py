"""
Access-control statements as change requests: a steward's GRANT through preview, approval, a ``privilege`` job and
its revert (exactly the rows back); a viewer's request for SELECT for themselves, decided by the approvers scoped to
that database; what a viewer may not request; a Ranger-governed metastore refusing grants.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.db import connections

from catalog_admin.errors import ApplicationError
from catalog_admin.selectors.metastores import Metastore
from operations.models import AuditRecord, Job
from operations.services.change_requests import (
    change_request_approve,
    change_request_execute,
    change_request_revert,
    change_request_submit,
)
from operations.services.privilege_kind import access_request_create, privilege_request_create
from tests.fixtures.factories import make_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_jobs")]


def grants_of(metastore: Metastore, principal: str) -> list[tuple[str, str]]:
    quote = connections[metastore.alias].ops.quote_name
    with connections[metastore.alias].cursor() as cursor:
        cursor.execute(
            f"SELECT {quote('TBL_PRIV')}, {quote('GRANTOR')} FROM {quote('TBL_PRIVS')} "
            f"WHERE {quote('PRINCIPAL_NAME')} = %s ORDER BY 1",
            [principal],
        )
        return [tuple(row) for row in cursor.fetchall()]


def approve_and_run(request, approver: User, runner: User, capture) -> None:
    with capture(execute=True):
        change_request_approve(request=request, user=approver, comment="ok")
    with capture(execute=True):
        change_request_execute(request=request, user=runner)
    request.refresh_from_db()


def test_a_grant_request_runs_as_a_privilege_job_and_its_revert_revokes_it(
    metastore: Metastore, people: dict[str, User], django_capture_on_commit_callbacks
) -> None:
    """GRANT by a steward: one approval (medium risk), a ``privilege`` job, the steward as grantor, audited; the
    revert request revokes exactly those rows and marks the original reverted."""
    # given
    request = privilege_request_create(
        user=people["steward"],
        metastore=metastore.name,
        statement="GRANT SELECT, INSERT ON TABLE sales.orders TO USER bob",
    )
    assert request.risk == "medium" and request.preview["kind"] == "privilege"
    request = change_request_submit(request=request, user=people["steward"])
    assert request.required_approvals == 1
    # when
    approve_and_run(request, people["approver"], people["steward"], django_capture_on_commit_callbacks)
    # then
    assert request.state == "succeeded"
    assert Job.objects.get(change_request=request).kind == "privilege"
    assert grants_of(metastore, "bob") == [("INSERT", "steward"), ("SELECT", "steward")]
    actions = list(AuditRecord.objects.filter(request_id_ref=request.pk).values_list("action", flat=True))
    assert actions == ["create", "submit", "approve", "execute", "finish"]
    # when
    revert = change_request_revert(request=request, user=people["steward"])
    assert revert.statement == "REVOKE SELECT, INSERT ON TABLE sales.orders FROM USER bob"
    revert = change_request_submit(request=revert, user=people["steward"])
    approve_and_run(revert, people["approver"], people["steward"], django_capture_on_commit_callbacks)
    # then
    assert revert.state == "succeeded"
    assert grants_of(metastore, "bob") == []
    request.refresh_from_db()
    assert request.state == "reverted"


def test_a_viewer_requests_select_for_themselves_and_a_scoped_approver_decides(
    metastore: Metastore, settings, django_capture_on_commit_callbacks
) -> None:
    """The viewer's request is submitted at once; an approver scoped to another database may not decide it, one
    scoped to ``sales`` may; the grant is the viewer's own SELECT."""
    # given
    settings.CATALOG_APPROVER_SCOPES = {"sales-approvers": ["sales"], "ops-approvers": ["ops"]}
    viewer = make_user("vera", "viewer")
    ops = make_user("oscar", "approver", "ops-approvers")
    sales = make_user("sally", "approver", "sales-approvers")
    # when
    request = access_request_create(user=viewer, metastore=metastore.name, database="sales", table="orders")
    # then
    assert request.state == "submitted"
    assert request.statement == "GRANT SELECT ON TABLE sales.orders TO USER vera"
    with pytest.raises(ApplicationError) as refused:
        change_request_approve(request=request, user=ops, comment="ok")
    assert "do not cover database 'sales'" in refused.value.message
    approve_and_run(request, sales, viewer, django_capture_on_commit_callbacks)
    assert request.state == "succeeded"
    assert grants_of(metastore, "vera") == [("SELECT", "vera")]


@pytest.mark.parametrize(
    "statement",
    [
        "GRANT SELECT ON TABLE sales.orders TO USER bob",  # for someone else
        "GRANT INSERT ON TABLE sales.orders TO USER vera",  # more than reading
        "GRANT SELECT ON TABLE sales.orders TO USER vera WITH GRANT OPTION",
        "CREATE ROLE mine",
    ],
)
def test_a_viewer_may_request_nothing_else(metastore: Metastore, statement: str) -> None:
    viewer = make_user("vera", "viewer")
    with pytest.raises(ApplicationError) as refused:
        privilege_request_create(user=viewer, metastore=metastore.name, statement=statement)
    assert refused.value.code == "permission_denied"


def test_a_ranger_governed_metastore_refuses_grant_requests_naming_why(
    metastore: Metastore, people: dict[str, User], settings
) -> None:
    # given
    settings.METASTORE_CONFIGS = [
        replace(c, authorization="ranger") if c.name == metastore.name else c for c in django_settings.METASTORE_CONFIGS
    ]
    request = privilege_request_create(
        user=people["steward"], metastore=metastore.name, statement="GRANT SELECT ON TABLE sales.orders TO USER bob"
    )
    # when
    with pytest.raises(ApplicationError) as refused:
        change_request_submit(request=request, user=people["steward"])
    # then
    assert refused.value.code == "hive_rule_violation"
    assert "governed by Apache Ranger" in refused.value.message
