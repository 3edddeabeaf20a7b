"""
Schemathesis against the API's own OpenAPI schema (``/api/schema/``), through Django's WSGI application.

Every operation of the schema gets its documented examples, the coverage phase's boundary and missing-parameter cases,
and up to ``MAX_EXAMPLES`` generated requests, valid and invalid ones (Hypothesis, derandomized with a fixed seed: the
same requests on every run), each sent once with a steward's token and once with an approver's. For every answer:

* no 5xx (``not_a_server_error``);
* its status code, content type and body are the ones the schema documents for the operation;
* a request the schema rules out is refused (``negative_data_rejection``): the server enforces what the schema says;
* a refused request (4xx) wrote nothing: no change request, approval, comment, job, execution or audit record (but
  the ``refused`` record every refused action leaves), and the default metastore's TBLS and TABLE_PARAMS are unchanged
  (a checksum before and after).

Jobs are left queued (``CATALOG_JOBS_MODE = "tasks"``), so nothing a generated request starts touches a metastore.
The requests run inside the test's rolled-back transaction: Django's WSGI handler is used as is, except that it does
not close the test's database connections at the end of each request (as Django's own test client does not).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any

import hypothesis
import pytest
import schemathesis
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connections
from drf_spectacular.renderers import OpenApiJsonRenderer
from werkzeug.test import Client

from catalog_admin.selectors.search import MIN_QUERY_LENGTH
from operations.models import Approval, AuditRecord, ChangeRequest, Comment, Execution, Job
from tests.fixtures.factories import api_key

METASTORE = "hive31_pg"  # the default metastore: where a request without a metastore goes
# Fixed, so that CI sends the same requests every run; set CATALOG_ADMIN_FUZZ_SEED (and CATALOG_ADMIN_FUZZ_EXAMPLES)
# to explore other requests locally.
MAX_EXAMPLES = int(os.environ.get("CATALOG_ADMIN_FUZZ_EXAMPLES", "25"))
SEED = int(os.environ.get("CATALOG_ADMIN_FUZZ_SEED", "4"))
ROLES = ("steward", "approver")
CHECKS = [
    schemathesis.checks.not_a_server_error,
    schemathesis.checks.status_code_conformance,
    schemathesis.checks.content_type_conformance,
    schemathesis.checks.response_schema_conformance,
    schemathesis.checks.negative_data_rejection,
]
CONFIG = schemathesis.Config.from_dict(
    {
        "seed": SEED,
        "generation": {"max-examples": MAX_EXAMPLES, "deterministic": True, "database": "none", "mode": "all"},
        "phases": {"coverage": {"enabled": True}, "stateful": {"enabled": False}},
    }
)


@pytest.fixture
def wsgi_application() -> Iterator[Any]:
    """``catalog_admin.wsgi.application``, which must not close the test's connections after each request."""
    from catalog_admin.wsgi import application

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield application
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def tokens(db: None, settings) -> dict[str, str]:
    """A token for a steward and one for an approver."""
    settings.CATALOG_JOBS_MODE = "tasks"
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    keys = {}
    for role in ROLES:
        user = User.objects.create_user(f"fuzz-{role}", f"{role}@example.com", "not-a-secret-1")
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        keys[role] = api_key(user)
    return keys


def served_schema() -> dict[str, Any]:
    """The OpenAPI document ``/api/schema/?format=json`` serves: the same generator and renderer as its view."""
    from catalog_admin.api.views import SchemaView

    view = SchemaView()
    generator = view.generator_class(urlconf=view.urlconf, api_version=view.api_version, patterns=view.patterns)
    document = generator.get_schema(request=None, public=view.serve_public)
    return json.loads(OpenApiJsonRenderer().render(document, renderer_context={}))


# Loaded when the module is collected (the schema view itself needs a signed-in user, so it cannot be asked then);
# ``test_the_fuzzed_schema_is_the_one_the_api_serves`` proves it is the document the API serves.
SCHEMA = served_schema()
schema = schemathesis.openapi.from_dict(SCHEMA, config=CONFIG)


def schema_operation(method: str, path: str) -> Any:
    """The schema's operation that serves ``method path`` (a concrete path, query string allowed)."""
    concrete = path.partition("?")[0]
    template = next(t for t in SCHEMA["paths"] if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", t), concrete))
    return schema[template][method.upper()]


def footprint() -> dict[str, Any]:
    """What a request could have written: the console's rows and the default metastore's tables."""
    with connections[METASTORE].cursor() as cursor:
        checksums = {}
        for table in ("TBLS", "TABLE_PARAMS"):
            cursor.execute(
                f"SELECT count(*), md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM \"{table}\" t"
            )
            checksums[table] = cursor.fetchone()
    return {
        "change_requests": list(ChangeRequest.objects.order_by("pk").values_list("pk", "state", "updated_at")),
        "approvals": Approval.objects.count(),
        "comments": Comment.objects.count(),
        "jobs": Job.objects.count(),
        "executions": Execution.objects.count(),
        "audit": AuditRecord.objects.exclude(outcome="refused").count(),
        **checksums,
    }


def test_the_fuzzed_schema_is_the_one_the_api_serves(wsgi_application: Any, tokens: dict[str, str]) -> None:
    """The document fuzzed here is exactly the one ``/api/schema/`` answers a signed-in client."""
    # given
    client = Client(wsgi_application)

    # when
    response = client.get("/api/schema/?format=json", headers={"Authorization": f"Token {tokens['steward']}"})

    # then
    assert response.status_code == 200
    assert response.get_json() == SCHEMA


@pytest.mark.slow  # about 45 s (25 requests per operation and role)
@schema.parametrize()
@hypothesis.settings(deadline=None, suppress_health_check=list(hypothesis.HealthCheck))
def test_every_operation_answers_within_its_schema_and_refusals_write_nothing(
    case: schemathesis.Case, tokens: dict[str, str], wsgi_application: Any
) -> None:
    """No 5xx; answers as documented; a 4xx leaves the console's rows and the metastore as they were."""
    for role in ROLES:
        # given
        headers = {"Authorization": f"Token {tokens[role]}"}
        before = footprint()

        # when
        response = case.call(headers=headers, app=wsgi_application)

        # then
        case.validate_response(response, checks=CHECKS, headers=headers)
        if 400 <= response.status_code < 500:
            assert footprint() == before, f"{role}: {case.method} {case.formatted_path} was refused but wrote"


# The requests schemathesis found, kept as examples -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "code"),
    [
        ("get", "/api/search/?q=ab%00", None, 400, "invalid_parameter"),
        ("get", "/api/change-requests/?database=sa%00les", None, 400, "invalid_parameter"),
        ("get", "/api/audit/?table=%00", None, 400, "invalid_parameter"),
        ("get", f"/api/metastores/{METASTORE}/databases/sa%00les/", None, 404, "not_found"),
        ("get", f"/api/metastores/{METASTORE}/databases/sales/tables/?name=%00", None, 400, "invalid_parameter"),
        (
            "post",
            "/api/change-requests/",
            {"operation": {"kind": "set_owner", "target": {"database": "sa\x00les", "table": "customers"},
                           "principal_type": "USER", "principal": "x"}},
            400,
            "invalid_parameter",
        ),
        ("post", "/api/change-requests/", {"statement": "ALTER TABLE sales.customers SET OWNER USER \x00"}, 400,
         "invalid_parameter"),
    ],
    ids=["search", "request-filter", "audit-filter", "path", "table-filter", "operation", "statement"],
)  # fmt: skip
def test_nul_characters_are_refused_before_they_reach_the_database(
    wsgi_application: Any, tokens: dict[str, str], method: str, path: str, body: Any, status: int, code: str
) -> None:
    """PostgreSQL cannot compare text with a NUL: it is refused up front (it was a 500) and nothing is written."""
    # given
    client = Client(wsgi_application)
    before = footprint()

    # when
    response = client.open(
        path, method=method.upper(), json=body, headers={"Authorization": f"Token {tokens['steward']}"}
    )

    # then
    assert (response.status_code, response.get_json()["code"]) == (status, code), response.get_data()
    assert footprint() == before


def test_every_write_documents_a_malformed_idempotency_key_and_an_unreadable_body() -> None:
    """Every POST and PATCH reads the Idempotency-Key header and the body: 400 and 415 are documented on each (the
    submit, refresh and cancel commands answered an undocumented 400, and the commands an undocumented 415)."""
    writes = {
        f"{method.upper()} {path}": set(operation["responses"])
        for path, operations in SCHEMA["paths"].items()
        for method, operation in operations.items()
        if method in ("post", "patch")
    }

    # settle, revise, the jobs' cancel and resume, the merges' preview and create, the notification choices, the
    # privileges' preview and create and the access requests
    assert len(writes) == 20
    assert {write: {"400", "415"} - documented for write, documented in writes.items()} == dict.fromkeys(writes, set())


@pytest.mark.parametrize("action", ["submit", "refresh", "cancel", "approve"])
def test_a_command_answers_a_malformed_key_and_an_unreadable_body_as_documented(
    wsgi_application: Any, tokens: dict[str, str], action: str
) -> None:
    """The answers the schema now documents: 400 invalid_parameter for the key, 415 for a body that is not JSON."""
    # given
    client = Client(wsgi_application)
    path = f"/api/change-requests/1/{action}/"
    auth = {"Authorization": f"Token {tokens['steward']}"}

    # when
    bad_key = client.post(path, json={}, headers={**auth, "Idempotency-Key": "\x7f"})
    text_body = client.post(path, data="hello", headers={**auth, "Idempotency-Key": "k1", "Content-Type": "text/plain"})

    # then
    assert (bad_key.status_code, bad_key.get_json()["code"]) == (400, "invalid_parameter")
    assert (text_body.status_code, text_body.get_json()["code"]) == (415, "unsupported_media_type")


# Real answers checked against the schema: generated paths rarely name a table that exists --------------------------


@pytest.mark.parametrize(
    "path",
    [
        f"/api/metastores/{METASTORE}/databases/sales/tables/orders/column-statistics/",
        f"/api/metastores/{METASTORE}/databases/sales/tables/customers/column-statistics/",
        f"/api/metastores/{METASTORE}/databases/sales/tables/orders/",
        f"/api/metastores/{METASTORE}/databases/sales/tables/orders/partitions/?page_size=500",
        f"/api/metastores/{METASTORE}/databases/sales/tables/?page_size=1&q=or",
        "/api/search/?q=or",
    ],
    ids=["statistics-orders", "statistics-customers", "table", "partitions", "tables", "search"],
)
def test_answers_on_the_seeded_metastore_match_the_schema(
    wsgi_application: Any, tokens: dict[str, str], path: str
) -> None:
    """Statistics bounds are integers, floats or decimal strings; the schema accepts each (its oneOf refused an
    integer, which is a number too); page sizes at the limit answer as documented."""
    # given
    client = Client(wsgi_application)
    headers = {"Authorization": f"Token {tokens['steward']}"}
    operation = schema_operation("get", path)

    # when
    response = client.get(path, headers=headers)

    # then
    assert response.status_code == 200, response.get_data()
    operation.validate_response(response)


# Limits: the schema declares what the server enforces ---------------------------------------------------------------


def parameters(name: str) -> dict[str, dict[str, Any]]:
    """``name``'s parameter schema in every operation that takes it."""
    return {
        f"{method.upper()} {path}": parameter["schema"]
        for path, operations in SCHEMA["paths"].items()
        for method, operation in operations.items()
        for parameter in operation.get("parameters", [])
        if parameter["name"] == name
    }


def test_the_schema_declares_the_servers_limits() -> None:
    """page_size, search's q and Idempotency-Key carry the bounds the server checks (they were undeclared)."""
    # when
    page_sizes = parameters("page_size")
    keys = parameters("Idempotency-Key")
    (search_q,) = (schema for operation, schema in parameters("q").items() if operation == "GET /api/search/")

    # then
    # with the ACID directories, revise, cancel, resume, merges, and the privilege and access requests
    assert len(page_sizes) == 5 and len(keys) == 17
    assert {(s["minimum"], s["maximum"]) for s in page_sizes.values()} == {(1, settings.CATALOG_MAX_PAGE_SIZE)}
    assert {(s["minLength"], s["maxLength"], s["pattern"]) for s in keys.values()} == {(1, 255, "^[ -~]+$")}
    assert search_q["minLength"] == MIN_QUERY_LENGTH


@pytest.mark.parametrize(
    ("method", "path", "headers", "status"),
    [
        ("get", "/api/change-requests/?page_size=500", {}, 200),
        ("get", "/api/change-requests/?page_size=501", {}, 400),
        ("get", "/api/audit/?page_size=0", {}, 400),
        ("get", f"/api/metastores/{METASTORE}/databases/sales/tables/?page_size=500", {}, 200),
        ("get", f"/api/metastores/{METASTORE}/databases/sales/tables/?page_size=501", {}, 400),
        ("get", "/api/search/?q=or", {}, 200),
        ("get", "/api/search/?q=%20o%20", {}, 400),
        ("post", "/api/change-requests/999999/submit/", {"Idempotency-Key": "k" * 255}, 404),
        ("post", "/api/change-requests/999999/submit/", {"Idempotency-Key": "k" * 256}, 400),
        ("get", "/api/change-requests/?state=&risk=", {}, 200),
        ("get", "/api/change-requests/?state=x", {}, 400),
    ],
    ids=[
        "page-500", "page-501", "page-0", "catalog-page-500", "catalog-page-501", "q-2", "q-1-blank-padded",
        "key-255", "key-256", "empty-filters", "unknown-state",
    ],
)  # fmt: skip
def test_requests_at_and_past_each_limit_answer_as_the_schema_says(
    wsgi_application: Any, tokens: dict[str, str], method: str, path: str, headers: dict[str, str], status: int
) -> None:
    """At a declared limit the request is served; one past it is refused as invalid_parameter; both answers
    conform to the schema."""
    # given
    client = Client(wsgi_application)
    auth = {"Authorization": f"Token {tokens['steward']}", **headers}
    operation = schema_operation(method, path)

    # when
    response = client.open(path, method=method.upper(), json={} if method == "post" else None, headers=auth)

    # then
    assert response.status_code == status, response.get_data()
    if status == 400:
        assert response.get_json()["code"] == "invalid_parameter"
    operation.validate_response(response)
