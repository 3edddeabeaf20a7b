"""
Request bodies are bounded: a body larger than ``DATA_UPLOAD_MAX_MEMORY_SIZE`` answers ``413 payload_too_large`` and a
JSON body nested deeper than ``MAX_JSON_DEPTH`` answers ``400 invalid_json``, in the error vocabulary, on pages and in
the API alike (both were 500s); nothing is written.
"""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.test import Client

from catalog_admin.api.parsers import MAX_JSON_DEPTH, json_depth
from operations.models import AuditRecord, ChangeRequest

pytestmark = pytest.mark.django_db

STATEMENT = "ALTER TABLE sales.customers SET OWNER USER bob"
THREE_MB = 3 * 1024 * 1024


def nested(depth: int) -> str:
    """A JSON body whose ``statement`` is ``depth`` arrays deep."""
    return '{"statement": ' + "[" * depth + '"x"' + "]" * depth + "}"


def test_a_3_mb_api_body_answers_413_payload_too_large(admin_client: Client) -> None:
    """The body is refused before it is read: the error names the limit."""
    # given
    body = json.dumps({"statement": STATEMENT, "reason": "x" * THREE_MB})

    # when
    response = admin_client.post("/api/change-requests/", body, content_type="application/json")

    # then
    assert response.status_code == 413
    assert response.json() == {
        "code": "payload_too_large",
        "message": f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes.",
        "details": {"max_bytes": settings.DATA_UPLOAD_MAX_MEMORY_SIZE},
    }
    assert (ChangeRequest.objects.count(), AuditRecord.objects.count()) == (0, 0)


def test_a_3_mb_form_answers_the_413_page(admin_client: Client) -> None:
    """A page's form gets the error page with the same code and message."""
    # when
    response = admin_client.post("/changes/new/", {"statement": STATEMENT, "reason": "x" * THREE_MB})

    # then
    assert response.status_code == 413
    assert response["Content-Type"].startswith("text/html")
    assert b"payload_too_large" in response.content
    assert ChangeRequest.objects.count() == 0


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 100_000], ids=["just-too-deep", "deeper-than-recursion"])
def test_too_deeply_nested_json_answers_400_invalid_json(admin_client: Client, depth: int) -> None:
    """Nesting past the limit, and far past Python's recursion limit (a RecursionError, a 500, before), is refused."""
    # when
    response = admin_client.post("/api/change-requests/", nested(depth), content_type="application/json")

    # then
    assert response.status_code == 400
    assert response.json() == {
        "code": "invalid_json",
        "message": f"The JSON body is nested more than {MAX_JSON_DEPTH} levels deep.",
        "details": {"max_depth": MAX_JSON_DEPTH},
    }
    assert ChangeRequest.objects.count() == 0


def test_json_within_the_depth_limit_reaches_the_view(admin_client: Client) -> None:
    """At the limit the body is parsed and validated as usual (here: a statement must be a string)."""
    # when
    response = admin_client.post("/api/change-requests/", nested(MAX_JSON_DEPTH - 1), content_type="application/json")

    # then
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_parameter"


def test_json_depth_counts_arrays_and_objects() -> None:
    """Scalars are depth 0; each array or object level adds one."""
    assert [json_depth(v) for v in ("x", [], {"a": [1, {"b": 2}]}, [[[]]])] == [0, 1, 3, 3]
