"""The change-request API with the database statements (issue 27): as a statement or a structured operation."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from catalog_admin.selectors.metastores import Metastore

pytestmark = [pytest.mark.django_db, pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)]


def create(client: APIClient, body: dict[str, Any]) -> Any:
    return client.post(reverse("operations_api:change-request-list"), body, format="json")


def test_a_database_operation_and_its_statement_make_the_same_draft(
    metastore: Metastore, api: dict[str, APIClient]
) -> None:
    """``{"kind": "create_database", …}`` is the draft ``CREATE DATABASE …`` makes: same statement, database
    subject, plan and fingerprint."""
    # given
    operation = {"kind": "create_database", "name": "api_made", "comment": "from the API", "properties": [["a", "1"]]}

    # when
    structured = create(api["steward"], {"operation": operation, "metastore": metastore.name})
    typed = create(api["steward"], {"statement": "CREATE DATABASE api_made COMMENT 'from the API' WITH DBPROPERTIES "
                                    "('a'='1')", "metastore": metastore.name})  # fmt: skip

    # then
    assert structured.status_code == typed.status_code == 201, structured.content
    one, two = structured.json(), typed.json()
    assert one["statement"] == two["statement"] == "CREATE DATABASE `api_made` COMMENT 'from the API' WITH " \
        "DBPROPERTIES ('a'='1')"  # fmt: skip
    assert (one["database"], one["table"], one["operation"]["kind"]) == ("api_made", "", "create_database")
    assert one["preview"]["fingerprint"] == two["preview"]["fingerprint"]
    assert one["preview"]["event"] == "CREATE_DATABASE" and one["risk"] == "low"


def test_a_bad_database_operation_is_refused_naming_the_field(metastore: Metastore, api: dict[str, APIClient]) -> None:
    """An unknown field of a database operation is ``invalid_parameter`` naming it; nothing is created."""
    # when
    response = create(api["steward"], {"operation": {"kind": "drop_database", "name": "ops", "purge": True},
                                       "metastore": metastore.name})  # fmt: skip

    # then
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_parameter" and "purge" in response.json()["message"]


def test_the_schema_describes_a_database_request(metastore: Metastore, api: dict[str, APIClient]) -> None:
    """The OpenAPI schema describes a database request: its operation matches exactly one of the operation's forms,
    and its plan holds every field the DatabasePlan component requires."""
    # given
    created = create(api["steward"], {"statement": "DROP DATABASE IF EXISTS ops", "metastore": metastore.name}).json()
    schemas = api["viewer"].get(reverse("api:schema"), {"format": "json"}).json()["components"]["schemas"]

    # when
    forms = schemas["ChangeRequest"]["properties"]["operation"]["oneOf"]
    matching = [form for form in forms if jsonschema.Draft4Validator(form).is_valid(created["operation"])]
    plan = schemas["DatabasePlan"]

    # then
    assert len(matching) == 1 and "create_database" in matching[0]["properties"]["kind"]["enum"]
    assert set(plan["required"]) <= set(created["preview"])
