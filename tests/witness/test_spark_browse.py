"""
The console shows exactly the tables, columns, partitions and locations that Spark SQL's SHOW/DESCRIBE report.

Spark (Hive 2.3's client) builds ``browse`` in ``spark_pg`` (``tests/fixtures/spark.py``: ``spark_catalog``): a
managed partitioned parquet table with a partition outside its root and one whose value Hive escapes, an external
table, a view and a ``USING parquet`` data-source table. Every expectation comes from Spark's own
``SHOW TABLES``, ``SHOW PARTITIONS`` and ``DESCRIBE FORMATTED``; the console is read twice, through its selectors
and through the read API (``/api/metastores/spark_pg/…``). Locations are compared as the exact strings, with no
normalization: Spark prints the ``file:/…`` URIs exactly as the metastore stores them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

import pytest
from rest_framework.test import APIClient

from catalog_admin.selectors.databases import get_database, list_databases
from catalog_admin.selectors.partitions import PartitionFilter, get_partition, list_partitions
from catalog_admin.selectors.tables import TableFilter, get_table_detail, list_tables
from tests.fixtures.spark import SparkCatalog

pytestmark = [pytest.mark.spark, pytest.mark.django_db]

KINDS = ("managed", "external", "view", "datasource")
PARTITIONED_KINDS = ("managed", "datasource")
# DESCRIBE FORMATTED's "Type" for each TBLS.TBL_TYPE Spark writes.
SPARK_TYPES = {"MANAGED_TABLE": "MANAGED", "EXTERNAL_TABLE": "EXTERNAL", "VIRTUAL_VIEW": "VIEW"}
PAGE = 2  # small pages, so that every list is read across several keyset pages


# Spark's side -----------------------------------------------------------------------------------------------------


@dataclass
class Described:
    """``DESCRIBE FORMATTED``, parsed: data columns, partition columns and each ``# …`` section's key/value rows."""

    columns: list[tuple[str, str, str | None]]
    partition_columns: list[tuple[str, str, str | None]]
    sections: dict[str, dict[str, str]] = field(default_factory=dict)

    def detail(self, key: str) -> str | None:
        """A row of the detailed (table or partition) information, as Spark prints it."""
        for name in ("# Detailed Table Information", "# Detailed Partition Information"):
            if key in self.sections.get(name, {}):
                return self.sections[name][key]
        return None


def describe(spark, target: str) -> Described:
    """Spark's rows, split at its ``# …`` headers (blank rows and ``# col_name`` only separate)."""
    sections: dict[str, list[tuple[str, str, str | None]]] = {"": []}
    current = ""
    for name, data_type, comment in spark.sql(f"DESCRIBE FORMATTED {target}").collect():
        if name in ("", "# col_name"):
            continue
        if name.startswith("#"):
            current = name
            sections.setdefault(current, [])
            continue
        sections[current].append((name, data_type, comment))
    partition_columns = sections.pop("# Partition Information", [])
    keys = {name for name, _t, _c in partition_columns}
    return Described(
        columns=[column for column in sections.pop("") if column[0] not in keys],
        partition_columns=partition_columns,
        sections={header: {key: value for key, value, _c in rows} for header, rows in sections.items()},
    )


def show_partitions(spark, target: str) -> list[str]:
    return [row[0] for row in spark.sql(f"SHOW PARTITIONS {target}").collect()]


def partition_spec(name: str) -> str:
    """``(dt='…', hour='…')`` for a partition name Spark showed (its values unescaped)."""
    pairs = [part.split("=", 1) for part in name.split("/")]
    return "(" + ", ".join(f"{key}='{unquote(value)}'" for key, value in pairs) + ")"


# The console's side -----------------------------------------------------------------------------------------------


@pytest.fixture
def api(django_user_model) -> APIClient:
    client = APIClient()
    client.force_authenticate(django_user_model.objects.create_user("spark-witness"))
    return client


def api_get(api: APIClient, path: str, **params: Any) -> dict[str, Any]:
    response = api.get(path, params)
    assert response.status_code == 200, response.content
    return response.json()


def api_pages(api: APIClient, path: str) -> list[dict[str, Any]]:
    """Every result of a cursor-paginated list, read in pages of ``PAGE``."""
    page = api_get(api, path, page_size=PAGE)
    results = list(page["results"])
    while page["next"]:
        page = api_get(api, page["next"])
        results += page["results"]
    return results


def selector_pages(read) -> list[Any]:
    """Every item of a selector's keyset pages (``read(cursor)`` returns one ``Page``)."""
    page = read("")
    items = list(page.items)
    while page.has_next:
        page = read(page.next_cursor)
        items += page.items
    return items


def table_path(catalog: SparkCatalog, table: str = "") -> str:
    path = f"/api/metastores/spark_pg/databases/{catalog.database}/tables/"
    return f"{path}{table}/" if table else path


def columns_of(rows: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    return [(row["name"], row["type"], row["comment"]) for row in rows]


# Tests ------------------------------------------------------------------------------------------------------------


def test_console_lists_the_databases_and_tables_spark_shows(spark, spark_catalog, spark_metastore, api):
    """SHOW DATABASES and SHOW TABLES IN browse are what the selectors and the API list, name for name."""
    # given
    databases = sorted(row[0] for row in spark.sql("SHOW DATABASES").collect())
    tables = sorted(row[1] for row in spark.sql(f"SHOW TABLES IN {spark_catalog.database}").collect())
    database = get_database(spark_metastore, spark_catalog.database)

    # when
    selector_databases = [summary.database.name for summary in list_databases(spark_metastore)]
    selector_tables = selector_pages(
        lambda cursor: list_tables(spark_metastore, database, TableFilter(), cursor=cursor, size=PAGE)
    )
    api_databases = [row["name"] for row in api_get(api, "/api/metastores/spark_pg/databases/")["results"]]
    api_tables = api_pages(api, table_path(spark_catalog))

    # then
    assert tables == sorted(spark_catalog.tables)
    assert selector_databases == api_databases == databases
    assert [row.name for row in selector_tables] == [row["name"] for row in api_tables] == tables


@pytest.mark.parametrize("kind", KINDS)
def test_console_shows_the_columns_type_and_location_spark_describes(spark, spark_catalog, spark_metastore, api, kind):
    """Data columns with types and comments, partition columns, Type (MANAGED/EXTERNAL/VIEW) and Location match."""
    # given
    table = getattr(spark_catalog, kind)
    spark_view = describe(spark, f"{spark_catalog.database}.{table}")

    # when
    detail = get_table_detail(spark_metastore, spark_catalog.database, table)
    body = api_get(api, table_path(spark_catalog, table))

    # then
    assert spark_view.columns, "Spark describes the columns"
    assert [(c.name, c.type, c.comment) for c in detail.columns] == columns_of(body["columns"]) == spark_view.columns
    assert (
        [(k.name, k.type, k.comment) for k in detail.partition_keys]
        == columns_of(body["partition_keys"])
        == spark_view.partition_columns
    )
    assert SPARK_TYPES[detail.table.type] == SPARK_TYPES[body["type"]] == spark_view.detail("Type")
    console_location = detail.table.sd.location or None  # a view's storage descriptor has no location
    assert console_location == (body["storage"] or {}).get("location") == spark_view.detail("Location")
    assert (kind == "view") is (spark_view.detail("Location") is None)


@pytest.mark.parametrize("kind", PARTITIONED_KINDS)
def test_console_lists_the_partitions_spark_shows(spark, spark_catalog, spark_metastore, api, kind):
    """SHOW PARTITIONS is exactly the console's partition list, by name and in order, across keyset pages."""
    # given
    table = getattr(spark_catalog, kind)
    names = show_partitions(spark, f"{spark_catalog.database}.{table}")
    detail = get_table_detail(spark_metastore, spark_catalog.database, table)

    # when
    rows = selector_pages(
        lambda cursor: list_partitions(
            spark_metastore, detail.table, detail.partition_keys, PartitionFilter(), cursor=cursor, size=PAGE
        )
    )
    api_rows = api_pages(api, f"{table_path(spark_catalog, table)}partitions/")

    # then
    assert len(names) > PAGE
    assert [row.name for row in rows] == [row["name"] for row in api_rows] == names


@pytest.mark.parametrize("kind", PARTITIONED_KINDS)
def test_console_shows_each_partition_location_spark_describes(spark, spark_catalog, spark_metastore, api, kind):
    """Each partition's Location and Partition Values from DESCRIBE FORMATTED … PARTITION are the console's."""
    # given
    table = getattr(spark_catalog, kind)
    target = f"{spark_catalog.database}.{table}"
    table_location = describe(spark, target).detail("Location")
    detail = get_table_detail(spark_metastore, spark_catalog.database, table)
    listed = {row["name"]: row for row in api_pages(api, f"{table_path(spark_catalog, table)}partitions/")}

    for name in show_partitions(spark, target):
        spark_view = describe(spark, f"{target} PARTITION {partition_spec(name)}")
        location = spark_view.detail("Location")

        # when
        partition = get_partition(spark_metastore, detail.table, name)
        body = api_get(api, f"{table_path(spark_catalog, table)}partitions/{quote(name, safe='')}/")

        # then
        assert partition.sd.location == body["location"] == listed[name]["location"] == location, name
        values = "[" + ", ".join(f"{key}={value}" for key, value in body["values"].items()) + "]"
        assert values == spark_view.detail("Partition Values"), name
        outside = not location.startswith(f"{table_location}/")
        assert body["outside_table_root"] is listed[name]["outside_table_root"] is outside, name
    assert any(row["outside_table_root"] for row in listed.values()) is (kind == "managed")
