"""A DROP TABLE goes through the same flow as every change: a high-risk plan needing two approvals, executed by the
job, and undropped by a revert request (itself approved)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User

from catalog_admin.models import Table
from catalog_admin.selectors.metastores import Metastore
from operations.ddl.parser import parse_alter
from operations.services.change_requests import (
    change_request_approve,
    change_request_create,
    change_request_execute,
    change_request_revert,
    change_request_submit,
)
from tests.fixtures.operations import warehouse_tree

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_jobs")]


def approve_and_run(request, people: dict[str, User], capture) -> None:  # noqa: ANN001 - a ChangeRequest, the fixture
    request = change_request_submit(request=request, user=people["steward"])
    assert request.required_approvals == 2
    for name in ("approver", "approver2"):
        request = change_request_approve(request=request, user=people[name])
    with capture(execute=True):
        change_request_execute(request=request, user=people["steward"])
    request.refresh_from_db()
    assert request.state == "succeeded"


def test_a_drop_request_needs_two_approvals_and_its_revert_undrops_the_table(
    metastore: Metastore, people: dict[str, User], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    # given
    tree = warehouse_tree(warehouse)
    tables = Table.objects.using(metastore.alias).filter(database__name="sales", name="orders")
    spec = parse_alter("DROP TABLE sales.orders")
    request = change_request_create(user=people["steward"], metastore=metastore.name, spec=spec, reason="retired")

    # when
    approve_and_run(request, people, django_capture_on_commit_callbacks)
    dropped = not tables.exists()
    request.refresh_from_db()
    approve_and_run(change_request_revert(request=request, user=people["steward"]), people,
                    django_capture_on_commit_callbacks)  # fmt: skip

    # then
    request.refresh_from_db()
    assert dropped
    assert request.state == "reverted"
    assert tables.exists()
    assert warehouse_tree(warehouse) == tree
