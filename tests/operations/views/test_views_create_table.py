"""CREATE TABLE as a steward meets it: "Create table…" on the database page, the guided request's statements, the API's
structured operation through approval and execution, and the requester as the new table's owner."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from catalog_admin.selectors.metastores import Metastore
from tests.fixtures.factories import html, table_row

pytestmark = [pytest.mark.django_db(databases="__all__"), pytest.mark.usefixtures("eager_jobs")]

OPERATION = {
    "kind": "create_table",
    "target": {"database": "sales", "table": "returns"},
    "columns": [{"name": "id", "type": "bigint", "comment": "return id"}, {"name": "reason", "type": "string"}],
    "partition_keys": [{"name": "dt", "type": "string"}],
    "stored_as": "ORC",
}


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_database_page_offers_create_table_to_stewards_only(metastore: Metastore, people: dict) -> None:
    # given
    page = reverse("catalog:tables", kwargs={"metastore": metastore.name, "database": "sales"})

    # when
    steward, viewer = (html(signed_in(people[name]).get(page)) for name in ("steward", "viewer"))

    # then
    assert 'id="request-create-table"' in steward and "table=sales.&amp;operation=create_table" in steward
    assert 'id="request-create-table"' not in viewer


def test_the_guided_request_offers_create_statements_that_preview_without_blockers(
    metastore: Metastore, people: dict
) -> None:
    """Each offered statement parses and previews on this database with no blocker: a steward edits, not fixes."""
    # given
    client = signed_in(people["steward"])

    # when
    page = html(client.get(reverse("operations:new"), {"metastore": metastore.name, "table": "sales.",
                                                       "operation": "create_table"}))  # fmt: skip

    # then
    picker = re.search(r'<nav class="panel guided" id="guided-picker".*?</nav>', page, re.DOTALL).group(0)
    assert re.findall(r'data-operation="(\w+)"', picker) == ["create_table", "create_external_table",
                                                             "create_table_like"]  # fmt: skip
    for statement in re.findall(r'data-statement="([^"]*)"', picker):
        values = {"metastore": metastore.name, "statement": unescape(statement)}
        preview = html(client.post(reverse("operations:preview"), values, HTTP_HX_REQUEST="true"))
        assert 'id="parse-error"' not in preview and 'id="preview-blockers"' not in preview, statement


def test_a_structured_create_table_is_approved_executed_and_owned_by_its_requester(
    metastore: Metastore, api: dict[str, APIClient], warehouse: Path, django_capture_on_commit_callbacks
) -> None:
    """The API's structured operation is the statement's spec; the table is created by the approved job, owned by
    the steward who asked (Hive: the session user)."""
    # given
    draft = api["steward"].post(reverse("operations_api:change-request-list"),
                                {"operation": OPERATION, "metastore": metastore.name, "reason": "returns"},
                                format="json")  # fmt: skip
    assert draft.status_code == 201, draft.content
    body = draft.json()
    assert body["statement"].startswith("CREATE TABLE `sales`.`returns` (`id` bigint COMMENT 'return id'")
    assert (body["risk"], body["operation"]["owner"]) == ("low", "steward")
    pk = body["id"]

    # when
    def act(who: str, action: str) -> Any:
        path = reverse(f"operations_api:change-request-{action}", kwargs={"pk": pk})
        return api[who].post(path, {}, format="json")

    assert act("steward", "submit").status_code == 200
    state = act("approver", "approve").json()["state"]
    if state != "approved":  # the policy may ask a second approver
        state = act("approver2", "approve").json()["state"]
    assert state == "approved"
    with django_capture_on_commit_callbacks(execute=True):
        assert act("steward", "execute").status_code == 202

    # then
    table = table_row(metastore, "sales", "returns")
    assert (table.owner, table.type, table.sd.serde.slib) == ("steward", "MANAGED_TABLE",
                                                               "org.apache.hadoop.hive.ql.io.orc.OrcSerde")  # fmt: skip
