"""
The access API: a GRANT previewed and requested through ``/api/privileges/``, approved and executed through the
change-request endpoints, then seen in ``/api/access/…`` with its history; a viewer's ``/api/access-requests/``;
refusals in the shared error vocabulary.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from operations.models import ChangeRequest

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("eager_jobs"),
    pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True),
]


def url(route: str, **kwargs: Any) -> str:
    return reverse(f"operations_api:{route}", kwargs=kwargs)


def test_a_grant_requested_approved_and_executed_shows_on_the_access_endpoints(
    metastore, api: dict[str, APIClient], django_capture_on_commit_callbacks
) -> None:
    # given
    body = {"statement": "GRANT SELECT ON TABLE sales.orders TO USER bob", "metastore": metastore.name}
    preview = api["steward"].post(url("privilege-preview"), body, format="json")
    assert preview.status_code == 200, preview.json()
    assert preview.json()["changes"][0]["values"]["GRANTOR"] == "steward"
    assert not ChangeRequest.objects.exists()
    # when
    created = api["steward"].post(url("privilege-create"), {**body, "reason": "reports"}, format="json")
    assert created.status_code == 201, created.json()
    pk = created.json()["id"]
    assert api["steward"].post(url("change-request-submit", pk=pk), format="json").status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        api["approver"].post(url("change-request-approve", pk=pk), {"comment": "ok"}, format="json")
    with django_capture_on_commit_callbacks(execute=True):
        executed = api["steward"].post(url("change-request-execute", pk=pk), format="json")
    assert executed.status_code in (200, 202), executed.json()
    # then
    report = api["viewer"].get(url("access-table", metastore=metastore.name, database="sales", table="orders"))
    assert report.status_code == 200
    readers = {(p["principal_name"], p["via"]) for p in report.json()["paths"]}
    assert ("bob", "grant") in readers and report.json()["enforced"] is True
    assert [h["action"] for h in report.json()["history"]][:2] == ["finish", "execute"]
    bob = api["viewer"].get(url("access-principal", metastore=metastore.name, kind="user", name="bob"))
    assert ("sales", "orders") in {(o["database"], o["table"]) for o in bob.json()["objects"]}


def test_a_viewer_requests_select_for_themselves(metastore, api: dict[str, APIClient]) -> None:
    response = api["viewer"].post(
        url("access-request-create"),
        {"database": "sales", "table": "orders", "metastore": metastore.name},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["state"] == "submitted"
    refused = api["viewer"].post(
        url("privilege-create"),
        {"statement": "GRANT SELECT ON sales.orders TO USER bob", "metastore": metastore.name},
        format="json",
    )
    assert refused.status_code == 403 and refused.json()["code"] == "permission_denied"


def test_bad_input_is_named_and_nothing_is_written(metastore, api: dict[str, APIClient]) -> None:
    bad = api["steward"].post(url("privilege-create"), {"statement": "GRANT SELECT (a) ON t TO USER x"}, format="json")
    assert bad.status_code == 400 and bad.json()["code"] == "ddl_parse_error"
    assert "Privileges on columns" in bad.json()["message"]
    missing = api["viewer"].get(url("access-table", metastore=metastore.name, database="sales", table="nope"))
    assert missing.status_code == 404
    wrong = api["viewer"].get(url("access-principal", metastore=metastore.name, kind="team", name="x"))
    assert wrong.status_code == 400
    assert not ChangeRequest.objects.exists()
