"""
The read API under ``/api/`` on every test metastore: payloads, cursor pages, filters, errors, auth and the schema.

Expectations come from the seed (``catalog_admin.seeding.content``: its table specs) and from the metastore's own rows
(read through the models), never from the API itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from types import ModuleType
from typing import Any
from urllib.parse import quote

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.staticfiles import finders
from django.db import OperationalError, connections
from django.test.utils import CaptureQueriesContext
from django.urls import URLPattern, reverse
from rest_framework.test import APIClient

from catalog_admin.api import urls as api_urls
from catalog_admin.api import views as api_views
from catalog_admin.api.serializers import HiveSerializer
from catalog_admin.db import is_read_only_sql
from catalog_admin.models import (
    Column,
    Database,
    DatabaseParam,
    Partition,
    PartitionParam,
    Table,
    TableColumnStatistics,
    TablePrivilege,
    TableType,
)
from catalog_admin.schema import SchemaVersion
from catalog_admin.seeding.content import (
    ACID_JOBS,
    ACID_PAYMENTS,
    DEMO_DATABASES,
    DEMO_TABLES,
    NEXT_WRITE_IDS,
    TableSpec,
)
from catalog_admin.selectors.metastores import Metastore
from catalog_admin.selectors.pagination import encode_cursor
from operations.api import urls as operations_api_urls
from tests.fixtures.factories import api_key, table_row

V3 = SchemaVersion(3, 0, 0)
V4 = SchemaVersion(4, 0, 0)
EXTERNAL_URL = re.compile(r"(?:https?:)?//[\w-]+\.[\w.-]+", re.IGNORECASE)  # a host: http://x.y, //cdn.x.y


def spec(database: str, table: str) -> TableSpec:
    return next(s for s in DEMO_TABLES if (s.database, s.name) == (database, table))


PARTITIONED = [s for s in DEMO_TABLES if s.partitions]
ORDERS = spec("sales", "orders")
CUSTOMERS = spec("sales", "customers")


# Fixtures and helpers --------------------------------------------------------------------------------------------


@pytest.fixture
def reader(db: None) -> User:
    return User.objects.create_user("api-reader", password="not-used")


@pytest.fixture
def token(reader: User) -> str:
    return api_key(reader)


@pytest.fixture
def api(token: str) -> APIClient:
    """A client authenticated with ``Authorization: Token …``."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def url(name: str, **kwargs: str) -> str:
    return reverse(f"api:{name}", kwargs=kwargs)


def table_url(name: str, metastore: Metastore, database: str, table: str, **kwargs: str) -> str:
    return url(name, metastore=metastore.name, database=database, table=table, **kwargs)


def get_ok(api: APIClient, path: str, **params: Any) -> dict[str, Any]:
    response = api.get(path, params)
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    return response.json()


def get_error(api: APIClient, path: str, status: int, code: str, **params: Any) -> dict[str, Any]:
    response = api.get(path, params)
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"code", "message", "details"}
    assert body["code"] == code
    assert "Traceback" not in body["message"]
    return body


def follow_pages(api: APIClient, path: str, **params: Any) -> Iterator[dict[str, Any]]:
    """Every page of a cursor-paginated list, following the absolute ``next`` URLs."""
    page = get_ok(api, path, **params)
    yield page
    while page["next"]:
        assert page["next"].startswith("http://testserver/api/")
        assert f"cursor={page['next_cursor']}" in page["next"]
        page = get_ok(api, page["next"])
        yield page


def partition_names(metastore: Metastore, table: Table) -> list[str]:
    return sorted(Partition.objects.using(metastore.alias).filter(table_id=table.id).values_list("name", flat=True))


# Metastores ------------------------------------------------------------------------------------------------------


def test_metastore_list_reports_every_registered_metastore(api: APIClient) -> None:
    # when
    body = get_ok(api, url("metastore-list"))

    # then
    by_name = {item["name"]: item for item in body["results"]}
    assert list(by_name) == [config.name for config in settings.METASTORE_CONFIGS]
    for config in settings.METASTORE_CONFIGS:
        item = by_name[config.name]
        version = settings.HIVE_TEST_METASTORES[config.name][0]
        assert item["reachable"] is True
        assert item["error"] is None
        assert item["schema_version"].startswith(version)
        assert item["vendor"] == config.vendor
        assert item["display_url"] == config.display_url
        assert item["default"] is (config.name == settings.DEFAULT_METASTORE)
        assert item["databases_url"] == f"http://testserver/api/metastores/{config.name}/databases/"


def test_metastore_detail(api: APIClient, metastore: Metastore) -> None:
    body = get_ok(api, url("metastore-detail", metastore=metastore.name))

    assert body["name"] == metastore.name
    assert body["schema_version"] == metastore.schema.raw_version
    assert body["reachable"] is True
    assert body["url"] == f"http://testserver/api/metastores/{metastore.name}/"


def test_unknown_metastore_is_404_naming_it(api: APIClient) -> None:
    body = get_error(api, url("database-list", metastore="atlantis"), 404, "not_found")

    assert "atlantis" in body["message"]
    assert body["details"] == {"kind": "metastore", "name": "atlantis"}


def test_unreachable_metastore_is_503_naming_it(api: APIClient, register_metastore: Any) -> None:
    # given: nothing listens on port 1
    register_metastore("offline", "postgresql://postgres@127.0.0.1:1/nothing")

    # when
    listed = {item["name"]: item for item in get_ok(api, url("metastore-list"))["results"]}
    detail = get_error(api, url("metastore-detail", metastore="offline"), 503, "metastore_unavailable")
    databases = get_error(api, url("database-list", metastore="offline"), 503, "metastore_unavailable")
    search = get_error(api, url("search"), 503, "metastore_unavailable", q="orders", metastore="offline")

    # then
    assert listed["offline"]["reachable"] is False
    assert listed["offline"]["schema_version"] is None
    assert "offline" in listed["offline"]["error"]
    for body in (detail, databases, search):
        assert "Metastore 'offline' is unavailable" in body["message"]
        assert body["details"]["metastore"] == "offline"


def test_connection_lost_during_a_request_is_503(api: APIClient, metastore: Metastore, monkeypatch) -> None:
    # given: the schema version is cached, then the server goes away
    def lost(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(api_views, "list_databases", lost)

    # when
    body = get_error(api, url("database-list", metastore=metastore.name), 503, "metastore_unavailable")

    # then
    assert body["message"] == f"Metastore '{metastore.name}' is unavailable: server closed the connection unexpectedly"


# Databases -------------------------------------------------------------------------------------------------------


def test_database_list_counts_tables_views_and_external_tables(api: APIClient, metastore: Metastore) -> None:
    # when
    body = get_ok(api, url("database-list", metastore=metastore.name))

    # then
    by_name = {item["name"]: item for item in body["results"]}
    assert {d.name for d in DEMO_DATABASES} <= set(by_name)
    tables = Table.objects.using(metastore.alias)
    for name, item in by_name.items():
        in_db = tables.filter(database__name=name)
        views = [TableType.VIRTUAL_VIEW, TableType.MATERIALIZED_VIEW]
        assert item["table_count"] == in_db.count()
        assert item["view_count"] == in_db.filter(type__in=views).count()
        assert item["external_count"] == in_db.filter(type=TableType.EXTERNAL).count()
        assert item["tables_url"].endswith(f"/api/metastores/{metastore.name}/databases/{name}/tables/")
    sales = by_name["sales"]
    assert sales["table_count"] == len([s for s in DEMO_TABLES if s.database == "sales"])
    assert by_name["marketing"]["view_count"] == 1
    assert by_name["marketing"]["external_count"] == 2
    assert sales["owner_name"] == "alice"
    assert sales["description"] == "Orders, customers and payments"


def test_database_columns_of_other_schema_versions_are_null(api: APIClient, metastore: Metastore) -> None:
    body = get_ok(api, url("database-detail", metastore=metastore.name, database="sales"))

    version = metastore.schema.version
    if version >= V3:
        assert body["catalog_name"] == Database.objects.on(metastore).get(name="sales").catalog_name
        assert body["catalog_name"]
    else:
        assert body["catalog_name"] is None
    if version < V4:
        assert body["managed_location_uri"] is None
        assert body["type"] is None
        assert body["create_time"] is None
    else:
        assert body["type"] == "NATIVE"


def test_database_detail_has_its_parameters(api: APIClient, metastore: Metastore) -> None:
    # when
    body = get_ok(api, url("database-detail", metastore=metastore.name, database="OPS"))

    # then: names are case-insensitive
    db = Database.objects.on(metastore).get(name="ops")
    params = dict(DatabaseParam.objects.using(metastore.alias).filter(database_id=db.id).values_list("key", "value"))
    assert body["name"] == "ops"
    assert body["parameters"] == params
    assert body["parameters"]["owner.team"] == "platform"
    assert body["location_uri"] == db.location_uri


def test_unknown_database_is_404_naming_it(api: APIClient, metastore: Metastore) -> None:
    body = get_error(api, url("database-detail", metastore=metastore.name, database="nowhere"), 404, "not_found")

    assert body["message"] == "Database 'nowhere' was not found."
    assert body["details"] == {"kind": "database", "name": "nowhere", "metastore": metastore.name}


# Tables ----------------------------------------------------------------------------------------------------------


def test_table_pages_list_every_table_once(api: APIClient, metastore: Metastore) -> None:
    # given
    path = url("table-list", metastore=metastore.name, database="sales")
    expected = sorted(
        Table.objects.using(metastore.alias).filter(database__name="sales").values_list("name", flat=True)
    )

    # when
    pages = list(follow_pages(api, path, page_size=1))

    # then
    names = [row["name"] for page in pages for row in page["results"]]
    assert names == expected
    assert len(pages) == len(expected)
    assert pages[-1]["next"] is None and pages[-1]["next_cursor"] is None
    orders = next(row for page in pages for row in page["results"] if row["name"] == "orders")
    assert orders == {
        "name": "orders",
        "type": "MANAGED_TABLE",
        "owner": ORDERS.owner,
        "create_time": table_row(metastore, "sales", "orders").create_time,
        "location": table_row(metastore, "sales", "orders").sd.location,
        "partitioned": True,
        "transactional": False,
        "url": f"http://testserver{table_url('table-detail', metastore, 'sales', 'orders')}",
    }


def test_table_pages_keep_the_filters_and_sort_in_next(api: APIClient, metastore: Metastore) -> None:
    # given
    path = url("table-list", metastore=metastore.name, database="sales")
    one_page = [row for page in follow_pages(api, path, sort="-created") for row in page["results"]]

    # when: newest first, two per page
    pages = list(follow_pages(api, path, sort="-created", page_size=2))

    # then
    rows = [row for page in pages for row in page["results"]]
    assert len(pages) == 2
    assert [row["name"] for row in rows] == [row["name"] for row in one_page]
    assert [row["create_time"] for row in rows] == sorted((row["create_time"] for row in rows), reverse=True)
    assert "sort=-created" in pages[0]["next"] and "page_size=2" in pages[0]["next"]


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"type": "EXTERNAL_TABLE"}, lambda s: s.kind == "EXTERNAL_TABLE"),
        ({"type": "VIRTUAL_VIEW"}, lambda s: s.kind == "VIRTUAL_VIEW"),
        ({"partitioned": "true"}, lambda s: bool(s.partitions)),
        ({"partitioned": "false"}, lambda s: not s.partitions),
        ({"transactional": "true"}, lambda s: s.acid),
        ({"transactional": "false", "partitioned": "true"}, lambda s: bool(s.partitions) and not s.acid),
        ({"owner": "growth"}, lambda s: s.owner == "growth"),
        ({"q": "CLICK"}, lambda s: "click" in s.name),
    ],
    ids=lambda value: "&".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else "",
)
def test_table_filters_narrow_the_list(api: APIClient, metastore: Metastore, params: dict, expected: Any) -> None:
    for database in ("sales", "marketing", "ops"):
        # when
        pages = follow_pages(api, url("table-list", metastore=metastore.name, database=database), **params)

        # then
        names = {row["name"] for page in pages for row in page["results"]}
        assert names == {s.name for s in DEMO_TABLES if s.database == database and expected(s)}, database


def test_table_detail_of_a_partitioned_table(api: APIClient, metastore: Metastore) -> None:
    # when
    body = get_ok(api, table_url("table-detail", metastore, "sales", "orders"))

    # then
    table = table_row(metastore, "sales", "orders")
    alias = metastore.alias
    assert body["database"] == "sales"
    assert body["name"] == "orders"
    assert body["type"] == "MANAGED_TABLE"
    assert body["owner"] == ORDERS.owner
    assert body["owner_type"] == ("USER" if metastore.schema.version >= V3 else None)
    assert body["write_id"] == (0 if metastore.schema.version >= V4 else None)
    assert [(c["name"], c["type"], c["position"]) for c in body["columns"]] == list(
        Column.objects.using(alias)
        .filter(cd_id=table.sd.cd_id)
        .order_by("position")
        .values_list("name", "type", "position")
    )
    assert [c["name"] for c in body["columns"]] == [name for name, _ in ORDERS.columns]
    assert [(k["name"], k["type"]) for k in body["partition_keys"]] == [("dt", "string"), ("hour", "int")]
    assert body["partition_count"] == len(ORDERS.partitions)
    storage = body["storage"]
    assert storage["location"] == table.sd.location
    assert storage["input_format"] == table.sd.input_format
    assert storage["serde"]["serialization_lib"] == table.sd.serde.slib
    assert body["parameters"]["comment"] == ORDERS.comment
    assert body["basic_stats"]["num_files"] == int(body["parameters"]["numFiles"])
    assert body["basic_stats"]["num_rows"] == int(body["parameters"]["numRows"])
    assert body["stats_accurate"]["BASIC_STATS"] == "true"
    assert body["transactional"] is False
    assert body["acid"] is None
    privileges = TablePrivilege.objects.using(alias).filter(table_id=table.id)
    assert sorted((p["principal_name"], p["privilege"]) for p in body["privileges"]) == sorted(
        privileges.values_list("principal_name", "privilege")
    )
    assert {"principal_name": "analyst", "privilege": "SELECT", "grant_option": False}.items() <= next(
        p for p in body["privileges"] if p["principal_name"] == "analyst"
    ).items()
    if metastore.schema.version < V3:
        assert all(p["authorizer"] is None for p in body["privileges"])
    assert body["partitions_url"].endswith("/tables/orders/partitions/")


def test_table_detail_of_a_bucketed_acid_table(api: APIClient, metastore: Metastore) -> None:
    # when
    body = get_ok(api, table_url("table-detail", metastore, *ACID_JOBS))

    # then
    assert body["transactional"] is True
    assert body["storage"]["num_buckets"] == 2
    assert body["storage"]["bucket_columns"] == ["job_id"]
    assert body["storage"]["serde"]["parameters"] == {"serialization.format": "1"}
    acid = body["acid"]
    expected_write_id = NEXT_WRITE_IDS[ACID_JOBS] if metastore.schema.version >= V3 else None
    assert acid["next_write_id"] == expected_write_id
    assert {t["state"] for t in acid["open_transactions"]} == {"o", "a"}
    assert sorted(lock["state"] for lock in acid["locks"]) == ["a", "w"]
    waiting = next(lock for lock in acid["locks"] if lock["state"] == "w")
    assert waiting["blocked_by_ext_id"] == next(lock["ext_id"] for lock in acid["locks"] if lock["state"] == "a")
    assert len(acid["compaction_queue"]) == 1
    assert {c["state"] for c in acid["completed_compactions"]} == {"s", "f"}
    compaction = acid["compaction_queue"][0]
    if metastore.schema.version >= V3:
        assert (compaction["highest_txn_id"], compaction["highest_write_id"]) == (None, 2)
    else:
        assert (compaction["highest_txn_id"], compaction["highest_write_id"]) == (1, None)
    if metastore.schema.version < V4:
        assert compaction["enqueue_time"] is None
        assert all(c["error_message"] is None for c in acid["completed_compactions"])

    payments = get_ok(api, table_url("table-detail", metastore, *ACID_PAYMENTS))
    assert payments["storage"]["sort_columns"] == [{"column": "paid_at", "order": "ASC"}]
    assert payments["acid"]["open_transactions"] == []


def test_table_detail_of_a_view(api: APIClient, metastore: Metastore) -> None:
    body = get_ok(api, table_url("table-detail", metastore, "marketing", "campaign_performance"))

    assert body["type"] == "VIRTUAL_VIEW"
    assert body["view_original_text"].startswith("SELECT c.name")
    assert body["view_expanded_text"].startswith("SELECT `c`.`name`")
    assert body["partition_keys"] == []
    assert body["partition_count"] == 0


def test_unknown_table_is_404_naming_it(api: APIClient, metastore: Metastore) -> None:
    body = get_error(api, table_url("table-detail", metastore, "sales", "nothing"), 404, "not_found")

    assert body["message"] == "Table 'sales.nothing' was not found."
    get_error(api, table_url("partition-list", metastore, "nowhere", "orders"), 404, "not_found")


# Column statistics -----------------------------------------------------------------------------------------------


def test_table_column_statistics(api: APIClient, metastore: Metastore) -> None:
    # when
    body = get_ok(api, table_url("table-column-statistics", metastore, "sales", "customers"))

    # then
    table = table_row(metastore, "sales", "customers")
    stats = TableColumnStatistics.objects.on(metastore).filter(table_id=table.id)
    assert body["partitioned"] is False
    assert [s["column_name"] for s in body["results"]] == sorted(stats.values_list("column_name", flat=True))
    assert {s["column_name"] for s in body["results"]} == {name for name, _ in CUSTOMERS.columns}
    by_column = {s["column_name"]: s for s in body["results"]}
    ids = stats.get(column_name="id")
    assert by_column["id"]["low_value"] == ids.long_low_value
    assert by_column["id"]["high_value"] == ids.long_high_value
    assert by_column["id"]["num_distincts"] == ids.num_distincts
    assert by_column["id"]["last_analyzed"] == ids.last_analyzed
    if metastore.schema.version >= V4:
        assert {s["engine"] for s in body["results"]} == {"hive"}
    else:
        assert {s["engine"] for s in body["results"]} == {None}
        assert {s["histogram"] for s in body["results"]} == {None}
    if metastore.schema.version < V3:
        assert {s["bit_vector"] for s in body["results"]} == {None}


def test_partitioned_table_keeps_column_statistics_per_partition(api: APIClient, metastore: Metastore) -> None:
    body = get_ok(api, table_url("table-column-statistics", metastore, "sales", "orders"))

    assert body["partitioned"] is True
    assert body["results"] == []
    assert body["partitions_url"].endswith("/tables/orders/partitions/")


# Partitions ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("table_spec", PARTITIONED, ids=lambda s: f"{s.database}.{s.name}")
@pytest.mark.parametrize("size", [1, 5])
def test_partition_pages_return_every_partition_exactly_once(
    api: APIClient, metastore: Metastore, table_spec: TableSpec, size: int
) -> None:
    # given
    table = table_row(metastore, table_spec.database, table_spec.name)
    path = table_url("partition-list", metastore, table_spec.database, table_spec.name)

    # when
    pages = list(follow_pages(api, path, page_size=size))

    # then
    names = [row["name"] for page in pages for row in page["results"]]
    assert names == partition_names(metastore, table)
    assert len(names) == len(set(names)) == len(table_spec.partitions)
    assert all(len(page["results"]) == size for page in pages[:-1])
    assert pages[-1]["next"] is None


def test_partition_rows(api: APIClient, metastore: Metastore) -> None:
    # when
    pages = follow_pages(api, table_url("partition-list", metastore, "sales", "orders"), page_size=100)
    rows = {row["name"]: row for page in pages for row in page["results"]}

    # then
    table = table_row(metastore, "sales", "orders")
    assert {name for name, row in rows.items() if row["outside_table_root"]} == set(ORDERS.relocated)
    assert {name for name, row in rows.items() if row["exists_on_disk"] is False} == set(ORDERS.missing)
    assert {row["freshness"] for row in rows.values()} == {"fresh", "stale"}
    first = rows["dt=2024-01-02/hour=3"]
    partition = Partition.objects.on(metastore, "sd").get(table_id=table.id, name="dt=2024-01-02/hour=3")
    params = dict(
        PartitionParam.objects.using(metastore.alias).filter(partition_id=partition.id).values_list("key", "value")
    )
    assert first["values"] == {"dt": "2024-01-02", "hour": "3"}
    assert first["location"] == partition.sd.location
    assert first["location"].startswith(table.sd.location)
    assert (first["num_files"], first["total_size"], first["num_rows"]) == (
        int(params["numFiles"]),
        int(params["totalSize"]),
        int(params["numRows"]),
    )
    assert first["exists_on_disk"] is True
    assert first["url"].endswith("/tables/orders/partitions/dt=2024-01-02/hour=3/")


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"key.dt": "2024-01-02"}, lambda dt, hour: dt == "2024-01-02"),
        ({"key.hour": "3"}, lambda dt, hour: hour == 3),
        ({"key.dt": "2024-01-03", "key.hour": "9"}, lambda dt, hour: (dt, hour) == ("2024-01-03", 9)),
        ({"key.dt": "2024-01-01", "q": "hour=6"}, lambda dt, hour: (dt, hour) == ("2024-01-01", 6)),
        ({"key.dt": "1999-12-31"}, lambda dt, hour: False),
        ({"key.dt": ""}, lambda dt, hour: True),
    ],
    ids=lambda value: "&".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else "",
)
def test_partition_filters_narrow_the_list(api: APIClient, metastore: Metastore, params: dict, expected: Any) -> None:
    # when
    pages = follow_pages(api, table_url("partition-list", metastore, "sales", "orders"), page_size=2, **params)

    # then
    names = [row["name"] for page in pages for row in page["results"]]
    assert names == sorted(f"dt={dt}/hour={hour}" for dt, hour in ORDERS.partitions if expected(dt, hour))


def test_partition_detail(api: APIClient, metastore: Metastore) -> None:
    # given: the name URL-encoded as a whole ('/' and '=' escaped)
    name = "dt=2024-01-01/hour=3"
    encoded = quote(name, safe="")
    path = f"{table_url('partition-list', metastore, 'sales', 'orders')}{encoded}/"

    # when
    body = get_ok(api, path)

    # then
    table = table_row(metastore, "sales", "orders")
    partition = Partition.objects.on(metastore, "sd").get(table_id=table.id, name=name)
    params = dict(
        PartitionParam.objects.using(metastore.alias).filter(partition_id=partition.id).values_list("key", "value")
    )
    assert body["name"] == name
    assert body["values"] == {"dt": "2024-01-01", "hour": "3"}
    assert body["location"] == partition.sd.location
    assert body["outside_table_root"] is True  # relocated by the seed
    assert body["exists_on_disk"] is True
    assert body["parameters"] == params
    assert body["num_rows"] == int(params["numRows"])
    assert body["freshness"] == "fresh"
    assert body["stats_accurate"]["BASIC_STATS"] == "true"
    assert {s["column_name"] for s in body["column_statistics"]} == {c for c, _ in ORDERS.columns}
    assert body["write_id"] == (0 if metastore.schema.version >= V4 else None)
    assert {s["engine"] for s in body["column_statistics"]} == ({"hive"} if metastore.schema.version >= V4 else {None})
    # the literal spelling (as in the list's url) names the same partition
    assert get_ok(api, body["url"]) == body


def test_partition_detail_of_a_missing_directory(api: APIClient, metastore: Metastore) -> None:
    (name,) = ORDERS.missing

    body = get_ok(api, table_url("partition-detail", metastore, "sales", "orders", partition_name=name))

    assert body["exists_on_disk"] is False
    assert body["outside_table_root"] is False


def test_unknown_partition_is_404_naming_it(api: APIClient, metastore: Metastore) -> None:
    path = table_url("partition-detail", metastore, "sales", "orders", partition_name="dt=1999-12-31/hour=0")

    body = get_error(api, path, 404, "not_found")

    assert body["message"] == "Partition 'dt=1999-12-31/hour=0' was not found."
    assert body["details"]["table"] == "orders"


# Search ----------------------------------------------------------------------------------------------------------


def test_search_finds_databases_and_tables(api: APIClient, metastore: Metastore) -> None:
    # when
    body = get_ok(api, url("search"), q="Ord", metastore=metastore.name)

    # then
    assert body["query"] == "ord"
    assert body["metastore"] == metastore.name
    assert [hit["name"] for hit in body["tables"]][0] == "orders"
    assert body["tables"][0]["url"].endswith(f"/api/metastores/{metastore.name}/databases/sales/tables/orders/")
    assert body["truncated"] is False
    assert [hit["name"] for hit in get_ok(api, url("search"), q="market", metastore=metastore.name)["databases"]] == [
        "marketing"
    ]


def test_search_uses_the_default_metastore(api: APIClient, db: None) -> None:
    body = get_ok(api, url("search"), q="clicks")

    assert body["metastore"] == settings.DEFAULT_METASTORE
    assert ("marketing", "clicks") in {(hit["database"], hit["name"]) for hit in body["tables"]}


# Malformed parameters --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("endpoint", "params", "parameter", "message"),
    [
        ("table-list", {"cursor": "%%%"}, "cursor", "The cursor is malformed"),
        ("table-list", {"cursor": encode_cursor(["a", "b"])}, "cursor", "The cursor is malformed"),
        ("table-list", {"sort": "created", "cursor": encode_cursor(["x", 1])}, "cursor", "The cursor is malformed"),
        ("table-list", {"page_size": "0"}, "page_size", "page_size must be an integer between 1 and 500, not '0'."),
        ("table-list", {"page_size": "many"}, "page_size", "not 'many'"),
        ("table-list", {"type": "TEMPORARY"}, "type", "not 'TEMPORARY'"),
        ("table-list", {"sort": "size"}, "sort", "sort must be one of"),
        ("table-list", {"partitioned": "maybe"}, "partitioned", "partitioned must be true or false, not 'maybe'."),
        ("partition-list", {"cursor": encode_cursor([None])}, "cursor", "The cursor is malformed"),
        ("partition-list", {"page_size": "501"}, "page_size", "not '501'"),
        ("partition-list", {"key.region": "eu"}, "key.region", "no partition key 'region'; its keys are: dt, hour"),
        ("search", {"q": "o"}, "q", "Search for at least 2 characters."),
    ],
)
def test_malformed_parameters_are_400_with_the_reason(
    api: APIClient, metastore: Metastore, endpoint: str, params: dict, parameter: str, message: str
) -> None:
    kwargs = {"metastore": metastore.name, "database": "sales", "table": "orders"}
    path = {
        "table-list": url("table-list", metastore=metastore.name, database="sales"),
        "partition-list": url("partition-list", **kwargs),
        "search": url("search"),
    }[endpoint]
    if endpoint == "search":
        params = {**params, "metastore": metastore.name}

    body = get_error(api, path, 400, "invalid_parameter", **params)

    assert message in body["message"]
    assert body["details"]["parameter"] == parameter


# Authentication --------------------------------------------------------------------------------------------------


def test_anonymous_requests_are_401_with_a_token_challenge(db: None) -> None:
    for path in (url("metastore-list"), url("database-list", metastore=settings.DEFAULT_METASTORE), url("schema")):
        response = APIClient().get(path)

        assert response.status_code == 401
        assert response["WWW-Authenticate"] == "Token"
        assert response.json() == {
            "code": "not_authenticated",
            "message": "Authentication credentials were not provided.",
            "details": {},
        }


def test_a_wrong_token_is_401(token: str) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token[::-1]}")

    response = client.get(url("metastore-list"))

    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"
    assert response.json()["message"] == "Invalid token."


def test_token_of_an_inactive_user_is_401(api: APIClient, reader: User) -> None:
    reader.is_active = False
    reader.save()

    response = api.get(url("metastore-list"))

    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


def test_session_authentication_works(reader: User) -> None:
    client = APIClient()
    client.force_login(reader)

    response = client.get(url("metastore-list"))

    assert response.status_code == 200


# Read-only, JSON only ----------------------------------------------------------------------------------------------


def test_browsing_every_endpoint_only_reads_the_metastore(api: APIClient, metastore: Metastore) -> None:
    # given
    paths = [
        url("metastore-detail", metastore=metastore.name),
        url("database-list", metastore=metastore.name),
        url("database-detail", metastore=metastore.name, database="sales"),
        url("table-list", metastore=metastore.name, database="sales"),
        table_url("table-detail", metastore, *ACID_JOBS),
        table_url("table-column-statistics", metastore, "sales", "customers"),
        table_url("partition-list", metastore, "sales", "orders"),
        table_url("partition-detail", metastore, "sales", "orders", partition_name="dt=2024-01-01/hour=0"),
        f"{url('search')}?q=orders&metastore={metastore.name}",
    ]

    # when
    with CaptureQueriesContext(connections[metastore.alias]) as queries:
        for path in paths:
            assert api.get(path).status_code == 200, path

    # then
    assert queries.captured_queries
    assert [q["sql"] for q in queries.captured_queries if not is_read_only_sql(q["sql"])] == []


@pytest.mark.parametrize(
    ("endpoint", "database", "table"),
    [("table-list", "sales", ""), ("partition-list", "sales", "orders"), ("partition-list", "marketing", "clicks")],
)
def test_a_page_costs_the_same_queries_whatever_its_size(
    api: APIClient, metastore: Metastore, endpoint: str, database: str, table: str
) -> None:
    kwargs = {"metastore": metastore.name, "database": database, **({"table": table} if table else {})}
    counts = []
    for size in (1, 100):
        with CaptureQueriesContext(connections[metastore.alias]) as queries:
            assert api.get(url(endpoint, **kwargs), {"page_size": size}).status_code == 200
        counts.append(len(queries.captured_queries))

    # At most 7: a natural-order table's order is read whole once, then remembered (the suite remembers nothing).
    assert counts[0] == counts[1] <= 7


def test_writing_methods_are_405(api: APIClient, metastore: Metastore) -> None:
    path = url("database-detail", metastore=metastore.name, database="sales")

    for method in (api.post, api.put, api.patch, api.delete):
        response = method(path, {})

        assert response.status_code == 405
        assert response.json()["code"] == "method_not_allowed"


def test_an_unexpected_error_is_a_json_500_without_a_stack_trace(
    api: APIClient, metastore: Metastore, monkeypatch, caplog
) -> None:
    # given
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(api_views, "list_databases", broken)
    api.raise_request_exception = False

    # when
    response = api.get(url("database-list", metastore=metastore.name))

    # then
    assert response.status_code == 500
    assert response.json() == {
        "code": "internal_error",
        "message": "An unexpected error occurred; it has been logged on the server.",
        "details": {},
    }
    assert "secret internals" in caplog.text  # logged with its traceback, for the operator


def test_versioned_fields_are_nullable() -> None:
    """A field the schema may lack is rendered as null, so the serializer must declare it nullable."""
    serializers = [HiveSerializer]
    checked = 0
    while serializers:
        cls = serializers.pop()
        serializers.extend(cls.__subclasses__())
        if not hasattr(cls, "hive_model"):
            continue
        for field in cls().fields.values():
            column = cls.hive_column(field)
            model_field = cls.hive_model._meta.get_field(column) if column else None
            if model_field is not None and (
                getattr(model_field, "hive_since", None) or getattr(model_field, "hive_until", None)
            ):
                checked += 1
                assert field.allow_null, f"{cls.__name__}.{field.field_name}"
    assert checked >= 10


# Schema and docs -------------------------------------------------------------------------------------------------


def api_routes(*modules: ModuleType) -> list[str]:
    """The OpenAPI path of every endpoint of ``modules`` (all but the schema and the docs)."""
    paths = []
    for pattern in [p for module in modules for p in module.urlpatterns]:
        assert isinstance(pattern, URLPattern)
        if pattern.name in {"schema", "docs"}:
            continue
        route = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern))
        route = route.replace("{pk}", "{id}")  # drf-spectacular's SCHEMA_COERCE_PATH_PK
        paths.append(f"/api/{route}")
    return paths


def test_openapi_schema_documents_every_endpoint(api: APIClient) -> None:
    # when
    response = api.get(url("schema"), {"format": "json"})

    # then
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert schema["info"]["title"] == "catalog-admin API"
    routes = api_routes(api_urls)
    assert len(routes) == 16  # ten, the ACID directories, compaction needs and delta chart, sample, SHOW CREATE, charts
    # the read API and the change-request API (tests/operations/api/test_api_change_requests.py checks the latter)
    assert sorted(schema["paths"]) == sorted(api_routes(api_urls, operations_api_urls))
    for path, operations in schema["paths"].items():
        if path not in routes:
            continue
        assert list(operations) == ["get"], path
        operation = operations["get"]
        assert operation["responses"]["200"]["content"]["application/json"]["schema"], path
        assert operation["responses"]["401"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/Error"
        }, path
        assert {"tokenAuth": []} in operation["security"], path
        for name in re.findall(r"{(\w+)}", path):
            assert any(p["name"] == name and p["in"] == "path" for p in operation["parameters"]), (path, name)
    tables = schema["paths"]["/api/metastores/{metastore}/databases/{database}/tables/"]["get"]
    assert {p["name"] for p in tables["parameters"] if p["in"] == "query"} == {
        "q",
        "type",
        "owner",
        "partitioned",
        "transactional",
        "sort",
        "cursor",
        "page_size",
    }
    assert "400" in tables["responses"]
    assert set(schema["components"]["schemas"]["Error"]["properties"]) == {"code", "message", "details"}


def test_docs_page_renders_with_local_assets_only(db: None) -> None:
    # when: the page is a public shell; the schema it loads needs a session
    response = APIClient().get(url("docs"))

    # then
    assert response.status_code == 200
    html = response.content.decode()
    script_url = re.findall(r'<script src="([^"]+\?script=)"', html)
    script = APIClient().get(script_url[0].replace("&amp;", "&")).content.decode()
    assert "<script>" not in html  # the start-up script is a file of its own: the CSP allows no inline script
    assert "SwaggerUIBundle" in script
    assert EXTERNAL_URL.search(html) is None and EXTERNAL_URL.search(script) is None
    assert '"validatorUrl": null' in script
    assert url("schema") in script
    assets = re.findall(r'(?:src|href)="/static/([^"]+)"', html)
    assert {"drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js"} <= set(assets)
    for asset in assets:
        assert finders.find(asset), asset
