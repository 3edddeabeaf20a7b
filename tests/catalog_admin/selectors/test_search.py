"""
Search over qualified names, table and column names and comments; the typeahead; and the opt-in trigram indexes
(``manage.py search_index``) that serve its queries on PostgreSQL, checked with EXPLAIN.
"""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db import connections
from django.db.models.functions import Lower
from django.test import Client
from django.urls import reverse

from catalog_admin.models import Column, Table
from catalog_admin.search_index import SEARCH_INDEXES, create_search_indexes, existing_search_indexes
from catalog_admin.selectors.metastores import Metastore
from catalog_admin.selectors.search import search_catalog
from tests.fixtures.factories import html, make_user

pytestmark = pytest.mark.django_db(databases="__all__")


def test_a_qualified_name_finds_the_table_in_that_database(metastore: Metastore) -> None:
    results = search_catalog(metastore, "sales.orders")

    assert [(hit.database, hit.name) for hit in results.tables] == [("sales", "orders")]
    assert results.databases == []


def test_a_database_prefix_and_part_of_a_table_name_are_enough(metastore: Metastore) -> None:
    results = search_catalog(metastore, "mark.cli")

    assert ("marketing", "clicks") in {(hit.database, hit.name) for hit in results.tables}
    assert all(hit.database.startswith("mark") for hit in results.tables)


def test_column_names_are_found_with_their_table_and_type(metastore: Metastore) -> None:
    results = search_catalog(metastore, "customer_id")

    assert ("sales", "orders", "customer_id", "bigint") in {
        (hit.database, hit.table, hit.column, hit.type) for hit in results.columns
    }


def test_a_qualified_column_finds_only_that_tables_column(metastore: Metastore) -> None:
    results = search_catalog(metastore, "sales.orders.amo")

    assert [(hit.table, hit.column) for hit in results.columns] == [("orders", "amount")]


def test_table_comments_are_searched_case_insensitively(metastore: Metastore) -> None:
    results = search_catalog(metastore, "ROW PER ORDER")

    assert ("sales", "orders", "", "One row per order") in {
        (hit.database, hit.table, hit.column, hit.comment) for hit in results.comments
    }


def test_the_typeahead_suggests_tables_and_columns_and_nothing_for_one_character(metastore: Metastore) -> None:
    # given
    client = Client()
    client.force_login(make_user("typeahead", "viewer"))
    url = reverse("catalog:search-suggestions")

    # when
    suggested = html(client.get(url, {"q": "sales.ord", "metastore": metastore.name}))
    short = client.get(url, {"q": "s", "metastore": metastore.name})

    # then
    assert f'href="/m/{metastore.name}/db/sales/t/orders/"' in suggested
    assert "All results for “sales.ord”" in suggested
    assert short.status_code == 200 and html(short).strip() == ""


def test_the_top_bar_search_box_asks_for_suggestions_as_one_types(metastore: Metastore) -> None:
    client = Client()
    client.force_login(make_user("typeahead2", "viewer"))

    content = html(client.get(reverse("catalog:databases", args=[metastore.name])))

    assert 'hx-get="/search/suggestions/"' in content
    assert 'hx-trigger="input changed delay:250ms, search"' in content
    assert 'id="search-suggestions"' in content


def test_the_search_page_lists_columns_and_comments(metastore: Metastore) -> None:
    client = Client()
    client.force_login(make_user("searcher", "viewer"))

    content = html(client.get(reverse("catalog:search"), {"q": "order", "metastore": metastore.name}))

    columns = content.split('id="column-results"')[1].split("</section>")[0]
    comments = content.split('id="comment-results"')[1].split("</section>")[0]
    assert "order_id" in columns
    assert "One row per order" in comments


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
def test_the_trigram_indexes_serve_every_search_predicate(metastore: Metastore) -> None:
    """
    The opt-in indexes (created here, inside the test's transaction) serve each LIKE the search writes, as the ORM
    writes it (``"TBL_NAME"::text LIKE``, ``lower("COMMENT") LIKE`` …): with plain scans switched off, PostgreSQL finds
    the matches through them. Which plan it picks for the joined queries is a matter of cost at scale:
    ``benchmarks/browse.py`` records them for 100,000 tables.
    """
    # given
    alias = metastore.alias
    assert existing_search_indexes(alias) == []  # never created implicitly
    create_search_indexes(alias, concurrently=False)
    predicates = {
        "catalog_admin_search_tbl_name": Table.objects.using(alias).filter(name__contains="orde"),
        "catalog_admin_search_column_name": Column.objects.using(alias).filter(name__contains="orde"),
        "catalog_admin_search_column_comment": Column.objects.using(alias)
        .alias(lowered=Lower("comment"))
        .filter(lowered__contains="orde"),
    }
    # (The partial index on TABLE_PARAMS comments competes here with the primary key's PARAM_KEY column, which wins
    # on a few hundred rows; the benchmark's plans show it at scale.)

    # when
    plans = {}
    with connections[alias].cursor() as cursor:
        for scan in ("enable_seqscan", "enable_indexscan", "enable_indexonlyscan"):
            cursor.execute(f"SET LOCAL {scan} = off")
        for index, queryset in predicates.items():
            sql, params = queryset.values("pk").query.sql_with_params()
            cursor.execute("EXPLAIN " + sql, params)
            plans[index] = "\n".join(row[0] for row in cursor.fetchall())

    # then
    assert existing_search_indexes(alias) == sorted(index.name for index in SEARCH_INDEXES)
    for index, plan in plans.items():
        assert f"Bitmap Index Scan on {index}" in plan, plan


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
def test_search_index_without_an_option_only_reports(metastore: Metastore) -> None:
    out = io.StringIO()

    call_command("search_index", metastore=metastore.name, stdout=out)

    assert existing_search_indexes(metastore.alias) == []
    assert out.getvalue().count("absent   CREATE INDEX CONCURRENTLY IF NOT EXISTS") == len(SEARCH_INDEXES)
    assert Table.objects.using(metastore.alias).exists()
