"""Database statements (issue 27) as change requests: the seam's flow from the request form to the revert."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from catalog_admin.models import Database
from catalog_admin.selectors.metastores import Metastore
from operations.choices import JobKind
from operations.ddl.parser import parse_alter
from operations.models import ChangeRequest, Job
from operations.services.change_requests import (
    change_request_approve,
    change_request_create,
    change_request_execute,
    change_request_revert,
    change_request_submit,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_jobs", "warehouse")]


def _approved(request: ChangeRequest, people: dict[str, User]) -> ChangeRequest:
    request = change_request_submit(request=request, user=people["steward"])
    for name in ("approver", "approver2")[: request.required_approvals]:
        request = change_request_approve(request=request, user=people[name])
    return request


def _run(request: ChangeRequest, people: dict[str, User], capture) -> ChangeRequest:  # noqa: ANN001
    with capture(execute=True):
        change_request_execute(request=_approved(request, people), user=people["steward"])
    request.refresh_from_db()
    return request


def test_create_then_drop_then_undrop_through_requests(
    metastore: Metastore, people: dict[str, User], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """CREATE DATABASE is a request on a database subject (no table) run by the ``database`` job, owned by its
    requester; DROP DATABASE needs two approvals (database dropped: high) and its revert brings the database back
    with the same id."""
    # given
    spec = parse_alter("CREATE DATABASE audit_lab COMMENT 'lab'")
    created = change_request_create(user=people["steward"], metastore=metastore.name, spec=spec)

    # when
    created = _run(created, people, django_capture_on_commit_callbacks)

    # then
    assert (created.database_name, created.table_name, created.risk) == ("audit_lab", "", "low")
    assert created.state == "succeeded" and Job.objects.get(change_request=created).kind == JobKind.DATABASE
    database = Database.objects.using(metastore.alias).get(name="audit_lab")
    assert database.owner_name == people["steward"].get_username()

    # and when
    dropped = change_request_create(
        user=people["steward"], metastore=metastore.name, spec=parse_alter("DROP DATABASE audit_lab")
    )
    assert (dropped.risk, dropped.required_approvals) == ("high", 2)
    dropped = _run(dropped, people, django_capture_on_commit_callbacks)
    undrop = change_request_revert(request=dropped, user=people["steward"], reason="undo")
    undrop = _run(undrop, people, django_capture_on_commit_callbacks)

    # then
    dropped.refresh_from_db()
    assert (dropped.state, undrop.state, undrop.operation["kind"]) == ("reverted", "succeeded", "revert_database")
    assert Database.objects.using(metastore.alias).get(name="audit_lab").pk == database.pk


def test_the_request_page_shows_the_database_subject_and_plan(
    metastore: Metastore, people: dict[str, User], client: Client
) -> None:
    """The request page of a database statement names the database and shows its plan: rows, directory, event."""
    # given
    spec = parse_alter("ALTER DATABASE sales SET DBPROPERTIES ('steward'='ann')")
    request = change_request_create(user=people["steward"], metastore=metastore.name, spec=spec)
    client.force_login(people["steward"])

    # when
    page = client.get(reverse("operations:detail", args=[request.pk]))

    # then
    html = page.content.decode()
    assert page.status_code == 200
    assert 'id="subject-database">sales<' in html and 'id="database-plan"' in html
    assert "param:steward" in html and "ALTER DATABASE `sales` SET DBPROPERTIES" in html


def test_the_request_form_previews_a_database_statement(
    metastore: Metastore, people: dict[str, User], client: Client
) -> None:
    """A CREATE DATABASE typed on the request form becomes a draft on the database kind."""
    # given
    client.force_login(people["steward"])

    # when
    response = client.post(
        reverse("operations:new"),
        {"metastore": metastore.name, "statement": "CREATE DATABASE IF NOT EXISTS form_made", "reason": "for the lab"},
    )

    # then
    request = ChangeRequest.objects.get()
    assert response.status_code == 302 and request.operation["kind"] == "create_database"
    assert request.database_name == "form_made"


def test_the_live_preview_shows_a_database_plan(metastore: Metastore, people: dict[str, User], client: Client) -> None:
    """As it is typed, a DROP DATABASE of a database with tables shows its plan, blocked by Hive's rule."""
    # given
    client.force_login(people["steward"])

    # when
    response = client.post(
        reverse("operations:preview"), {"metastore": metastore.name, "statement": "DROP DATABASE sales"}
    )

    # then
    html = response.content.decode()
    assert 'id="database-blockers"' in html and "is not empty. One or more tables exist" in html
