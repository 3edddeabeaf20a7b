"""
The merge API: ``POST /api/merges/preview/`` (nothing written) and ``POST /api/merges/`` (a draft request on the
target), then the ordinary change-request endpoints; refusals in the shared error vocabulary, writing nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from catalog_admin.metastores import DEMO_METASTORE_NAME
from catalog_admin.models import Partition
from operations.models import AuditRecord, ChangeRequest

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_jobs")]

SOURCE, TARGET = "hive23_pg", "hive31_pg"


def url(name: str, **kwargs: Any) -> str:
    return reverse(f"operations_api:{name}", kwargs=kwargs)


def _warehouse(alias: str) -> str:
    return next(c.warehouse_location for c in settings.METASTORE_CONFIGS if c.name == alias)


def _body(**changes: Any) -> dict[str, Any]:
    return {
        "source": SOURCE,
        "target": TARGET,
        "databases": ["sales", "marketing"],
        "renames": {"sales": "sales_imported", "marketing": "marketing_imported"},
        "location_rules": [{"old": _warehouse(SOURCE), "new": f"{_warehouse(TARGET)}/from_{SOURCE}"}],
        **changes,
    }


@pytest.mark.matrix
def test_the_preview_answers_counts_ids_and_the_estimate_and_writes_nothing(api: dict[str, APIClient]) -> None:
    """A viewer previews a merge: partitions in, id ranges, high risk, an estimate with its basis; nothing stored."""
    # when
    response = api["viewer"].post(url("merge-preview"), _body(), format="json")
    # then
    assert response.status_code == 200, response.json()
    preview = response.json()
    partitions = Partition.objects.using(SOURCE).filter(table__database__name__in=("sales", "marketing")).count()
    tables = {t["table"]: t for t in preview["tables"]}
    assert tables["PARTITIONS"]["rows"] == partitions == preview["partitions_touched"] > 0
    assert tables["TBLS"]["first_id"] is not None and tables["TBLS"]["last_id"] >= tables["TBLS"]["first_id"]
    assert (preview["executable"], preview["risk"], preview["metastore"]) == (True, "high", TARGET)
    assert preview["estimate"]["partitions"] == partitions and preview["estimate"]["basis"]
    assert not ChangeRequest.objects.exists() and not AuditRecord.objects.exists()


@pytest.mark.matrix
def test_a_steward_creates_a_merge_request_and_submits_it_through_the_request_endpoints(
    api: dict[str, APIClient],
) -> None:
    """POST /api/merges/ makes a draft on the target (201); submit and one approval go through the normal endpoints;
    the second approval is still needed (high risk), and the requester cannot approve."""
    # when
    created = api["steward"].post(url("merge-create"), {**_body(), "reason": "consolidate"}, format="json")
    # then
    assert created.status_code == 201, created.json()
    body = created.json()
    assert (body["metastore"], body["state"], body["risk"], body["required_approvals"]) == (TARGET, "draft", "high", 2)
    assert body["operation"]["kind"] == "merge" and body["preview"]["kind"] == "merge"
    # when
    submitted = api["steward"].post(url("change-request-submit", pk=body["id"]), {}, format="json")
    own = api["steward"].post(url("change-request-approve", pk=body["id"]), {}, format="json")
    approved = api["approver"].post(url("change-request-approve", pk=body["id"]), {}, format="json")
    # then
    assert submitted.status_code == 200 and submitted.json()["state"] == "submitted"
    assert own.status_code == 403
    assert approved.status_code == 200 and approved.json()["state"] == "submitted"  # one of two


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"target": TARGET}, 400, "invalid_parameter"),
        ({"source": TARGET, "target": TARGET}, 400, "invalid_parameter"),
        ({"source": "nowhere", "target": TARGET}, 404, "not_found"),
        ({"source": TARGET, "target": "nowhere", "renames": {"sales": ""}}, 400, "invalid_parameter"),
        ({"source": TARGET, "target": "hive31_pg", "location_rules": [{"old": "", "new": "/x"}]}, 400,
         "invalid_parameter"),
    ],
    ids=["no-source", "same", "unknown-source", "empty-rename", "empty-rule"],
)  # fmt: skip
def test_bad_input_is_refused_in_the_error_vocabulary_and_writes_nothing(
    api: dict[str, APIClient], body: dict[str, Any], status: int, code: str
) -> None:
    """Malformed or impossible merges answer the shared error shape; no request, no audit record."""
    # when
    response = api["steward"].post(url("merge-create"), body, format="json")
    # then
    assert (response.status_code, response.json()["code"]) == (status, code), response.json()
    assert not ChangeRequest.objects.exists()


def test_only_stewards_create_merge_requests(api: dict[str, APIClient]) -> None:
    """A viewer may preview but not request: 403 permission_denied (checked before the metastores are read)."""
    # when
    response = api["viewer"].post(url("merge-create"), {"source": "x", "target": "y"}, format="json")
    # then
    assert response.status_code == 403 and response.json()["code"] == "permission_denied"


def test_the_schema_documents_the_merge_endpoints(api: dict[str, APIClient], tmp_path: Any) -> None:
    """Both routes are in the OpenAPI schema (validated without warnings), a request's preview may be a merge's."""
    # when
    schema = api["viewer"].get(reverse("api:schema"), {"format": "json"}).json()
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
    # then
    assert set(schema["paths"]["/api/merges/"]) == {"post"} and set(schema["paths"]["/api/merges/preview/"]) == {"post"}
    assert "estimate" in schema["components"]["schemas"]["MergePreview"]["properties"]
    create = schema["paths"]["/api/merges/"]["post"]
    assert any(p["name"] == "Idempotency-Key" for p in create["parameters"])
    assert {"201", "400", "403", "404", "415"} <= set(create["responses"])


def test_the_api_examples_name_the_demos_metastore(tmp_path) -> None:
    """The OpenAPI examples of a new change request and of a merge name the metastore the demo has (``demo``), so
    they work as written against ``bin/demo``; no example names a test-only alias."""
    # when
    call_command("spectacular", "--file", str(tmp_path / "schema.yaml"))
    schema = (tmp_path / "schema.yaml").read_text()

    # then
    assert f"metastore: {DEMO_METASTORE_NAME}" in schema and f"target: {DEMO_METASTORE_NAME}" in schema
    assert "hive31_pg" not in schema and "hive23_my" not in schema
