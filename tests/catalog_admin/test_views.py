"""
The browsing pages, rendered against every seeded test metastore (Hive 2.3/3.1/4.0 on PostgreSQL and
MariaDB, and SQLite): what each page shows, the htmx partials, keyset paging, filters, and the 400, 404
and 503 pages. Table and partition names are discovered through the selectors, not assumed, so the
tests follow the seed; the seed only has to provide a partitioned table with a partition outside its
table root and one missing on disk, a view, an ACID table and a table with column statistics.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from types import SimpleNamespace
from urllib.parse import unquote

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.db import OperationalError
from django.test import Client
from django.urls import resolve, reverse
from django.utils.html import escape

from catalog_admin.models import TableType
from catalog_admin.roles import Role
from catalog_admin.selectors.databases import list_databases
from catalog_admin.selectors.metastores import Metastore
from catalog_admin.selectors.partitions import PartitionFilter, PartitionRow, list_partitions
from catalog_admin.selectors.tables import TableDetail, TableFilter, get_table_detail, list_tables
from catalog_admin.templatetags.catalog import (
    epoch,
    epoch_ms,
    grouped,
    humanize_bytes,
    natural_order,
    partition_size,
    table_type,
)
from tests.fixtures.factories import html

pytestmark = pytest.mark.django_db(databases="__all__")

ALL_ROWS = 500  # the maximum page size: every seeded row on one page


# Discovering the seeded content ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seeded:
    """Names of seeded objects with the properties the tests need, read through the selectors."""

    databases: tuple[str, ...]
    partitioned: tuple[str, str]  # (database, table) with partitions outside its root and missing on disk
    partitions: tuple[PartitionRow, ...]  # every partition of `partitioned`, by name
    with_column_stats: tuple[str, str]
    view: tuple[str, str]
    acid: tuple[str, str]
    external: tuple[str, str]


_SEEDED: dict[str, Seeded] = {}


def seeded(metastore: Metastore) -> Seeded:
    """What the seed put in ``metastore``; read once per alias, as every test sees the same seeded content."""
    if metastore.alias not in _SEEDED:
        _SEEDED[metastore.alias] = _discover(metastore)
    return _SEEDED[metastore.alias]


def _discover(metastore: Metastore) -> Seeded:
    alias = metastore.alias
    details: list[TableDetail] = []
    databases = [summary.database.name for summary in list_databases(metastore)]
    for name in databases:
        database = next(s.database for s in list_databases(metastore) if s.database.name == name)
        rows = list_tables(metastore, database, TableFilter(), size=ALL_ROWS).items
        details += [get_table_detail(metastore, name, row.name) for row in rows]

    def first(predicate, what: str) -> tuple[str, str]:
        found = next((d for d in details if predicate(d)), None)
        assert found is not None, f"the seed of {alias} has no {what}"
        return (found.database.name, found.table.name)

    partitioned, partitions = None, ()
    for detail in sorted(details, key=lambda d: -d.partition_count):
        if not detail.partition_keys:
            continue
        rows = tuple(
            list_partitions(metastore, detail.table, detail.partition_keys, PartitionFilter(), size=ALL_ROWS).items
        )
        if any(r.outside_table_root for r in rows) and any(r.exists_on_disk is False for r in rows):
            partitioned, partitions = (detail.database.name, detail.table.name), rows
            break
    assert partitioned, f"the seed of {alias} has no partitioned table with relocated and missing partitions"
    return Seeded(
        databases=tuple(databases),
        partitioned=partitioned,
        partitions=partitions,
        with_column_stats=first(lambda d: d.column_statistics and not d.partition_keys, "table with column stats"),
        view=first(lambda d: d.table.type == TableType.VIRTUAL_VIEW, "view"),
        acid=first(lambda d: d.is_transactional, "ACID table"),
        external=first(lambda d: d.table.type == TableType.EXTERNAL, "external table"),
    )


# Helpers -----------------------------------------------------------------------------------------------------------


@pytest.fixture
def client(django_user_model) -> Client:
    """A client signed in as a data steward."""
    user = django_user_model.objects.create_user(username="steward", password="not-a-secret-1")
    client = Client()
    client.force_login(user)
    return client


def row_of(content: str, marker: str) -> str:
    """The HTML of the first table row containing ``marker``."""
    for row in content.split("<tr")[1:]:
        if marker in row:
            return row.split("</tr>")[0]
    raise AssertionError(f"no table row contains {marker!r}")


def link_names(content: str, url_prefix: str) -> list[str]:
    """The last path segment of every link under ``url_prefix`` in the list (in page order)."""
    return [m.group(1) for m in re.finditer(rf'href="{re.escape(url_prefix)}([^/"]+)/"', content)]


def next_link(content: str) -> str:
    match = re.search(r'<a class="button" rel="next" href="([^"]+)"', content)
    assert match, "the page has no Next link"
    return match.group(1).replace("&amp;", "&")


def tables_url(metastore: Metastore, database: str) -> str:
    return reverse("catalog:tables", args=[metastore.name, database])


def table_url(metastore: Metastore, database: str, table: str) -> str:
    return reverse("catalog:table", args=[metastore.name, database, table])


def partitions_url(metastore: Metastore, database: str, table: str) -> str:
    return reverse("catalog:partitions", args=[metastore.name, database, table])


# Sign-in -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/m/hive31_pg/", "/m/hive31_pg/db/sales/", "/search/?q=orders"])
def test_every_page_redirects_anonymous_users_to_sign_in(path):
    response = Client().get(path)

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=/")


def test_sign_in_page_signs_in_and_sign_out_is_a_post(django_user_model):
    # given
    django_user_model.objects.create_user(username="steward", password="not-a-secret-1")
    browser = Client()

    # when
    page = browser.get("/accounts/login/")
    signed_in = browser.post("/accounts/login/", {"username": "steward", "password": "not-a-secret-1"})
    home = browser.get("/")
    signed_out = browser.post("/accounts/logout/")

    # then
    assert page.status_code == 200
    assert 'name="username"' in html(page) and 'name="password"' in html(page)
    assert signed_in.status_code == 302 and signed_in["Location"] == "/changes/home/"  # Home: the work waiting
    assert '<form method="post" action="/accounts/logout/">' in html(home)
    assert signed_out.status_code == 302
    assert browser.get("/").status_code == 302


def test_every_page_starts_with_a_skip_link_and_links_the_api_docs(client):
    """Keyboard users skip the top bar (the first link leads to the content, which takes the focus); the API's docs
    are one click away from every page."""
    # when
    page = html(client.get("/"))

    # then
    body = page.split("<body>", 1)[1]
    first_link = re.search(r"<a [^>]*>", body).group(0)
    assert 'class="skip-link"' in first_link and 'href="#main"' in first_link
    assert '<main id="main" tabindex="-1">' in page
    assert re.search(r'<a href="/api/docs/" id="nav-api-docs"', page)
    assert client.get("/api/docs/").status_code == 200


def test_a_wrong_password_is_refused_on_the_sign_in_page(django_user_model):
    django_user_model.objects.create_user(username="steward", password="not-a-secret-1")

    response = Client().post("/accounts/login/", {"username": "steward", "password": "wrong"})

    assert response.status_code == 200
    assert "did not match" in html(response)


# Overview and databases --------------------------------------------------------------------------------------------


@pytest.mark.matrix
def test_overview_lists_every_registered_metastore_with_its_status(django_user_model):
    # given
    operator = django_user_model.objects.create_user(username="operator", is_staff=True)
    client = Client()
    client.force_login(operator)

    # when
    response = client.get("/")

    # then
    content = html(response)
    assert response.status_code == 200
    for config in settings.METASTORE_CONFIGS:
        row = row_of(content, f'href="/m/{config.name}/"')
        assert config.vendor in row
        assert config.display_url in row
        assert "reachable" in row
    assert re.search(r"Hive 2\.3\.\d", content) and re.search(r"Hive 4\.0\.\d", content)
    assert f'href="/m/{settings.DEFAULT_METASTORE}/"' in content
    assert "Browse the default metastore" in content


def test_the_overview_shows_connection_strings_only_to_operators(client, django_user_model):
    """A steward sees each metastore's name, vendor and status, not where it lives; an admin sees the URLs too."""
    # given
    admin = django_user_model.objects.create_user(username="admin-user")
    admin.groups.add(Group.objects.get_or_create(name=Role.ADMIN)[0])
    as_admin = Client()
    as_admin.force_login(admin)

    # when
    steward_page = html(client.get("/"))
    admin_page = html(as_admin.get("/"))

    # then
    config = settings.METASTORE_CONFIGS[0]
    assert config.display_url not in steward_page and "<th>Connection</th>" not in steward_page
    assert config.display_url in admin_page and "<th>Connection</th>" in admin_page


def test_overview_shows_the_database_count(client, metastore):
    response = client.get("/")

    row = row_of(html(response), f'href="/m/{metastore.name}/"')
    assert f'<td class="num">{len(list_databases(metastore))}</td>' in row


def test_overview_shows_each_metastores_trash_retention(client, metastore, settings):
    """The retention a purge of the console's trash must respect, per metastore; "kept until purged" without one."""
    # given
    settings.METASTORE_CONFIGS = [
        replace(c, trash_retention_days=14) if c.name == metastore.name else c for c in settings.METASTORE_CONFIGS
    ]

    # when
    page = html(client.get("/"))

    # then
    assert "<th>Trash retention</th>" in page
    assert ">14 days</td>" in row_of(page, f'href="/m/{metastore.name}/"')


def test_overview_names_an_unreachable_metastore_and_its_error_without_a_traceback(client, register_metastore):
    # given
    register_metastore("offline", "postgresql://postgres@127.0.0.1:1/nowhere")

    # when
    response = client.get("/")

    # then
    content = html(response)
    assert response.status_code == 200
    row = row_of(content, "<strong>offline</strong>")
    assert "unavailable" in row
    assert "Metastore &#x27;offline&#x27; is unavailable: " in row
    assert "Traceback" not in content
    assert 'href="/m/offline/"' not in row  # no link into a metastore that cannot be read


def test_an_unreachable_metastore_page_is_a_503_naming_it(client, register_metastore):
    register_metastore("offline", "postgresql://postgres@127.0.0.1:1/nowhere")

    response = client.get("/m/offline/")

    assert response.status_code == 503
    assert "Metastore &#x27;offline&#x27; is unavailable" in html(response)
    assert "metastore_unavailable" in html(response)
    assert "Traceback" not in html(response)


def test_databases_page_lists_every_database_with_counts(client, metastore):
    # given
    summaries = list_databases(metastore)

    # when
    response = client.get(reverse("catalog:databases", args=[metastore.name]))

    # then
    content = html(response)
    assert response.status_code == 200
    assert {"sales", "marketing", "ops"} <= {s.database.name for s in summaries}
    for summary in summaries:
        row = row_of(content, f'href="{tables_url(metastore, summary.database.name)}"')
        assert [int(n) for n in re.findall(r'<td class="num">(\d+)</td>', row)] == [
            summary.tables,
            summary.views,
            summary.external,
        ]
        assert summary.database.location_uri in row
        assert (summary.database.owner_name or "—") in row
    assert f"Hive schema {metastore.schema.raw_version}" in content
    assert f"<strong>{metastore.name}</strong>" in content  # the current metastore in the top bar


# Tables of a database ----------------------------------------------------------------------------------------------


def test_tables_page_lists_the_tables_with_their_flags(client, metastore):
    # given
    data = seeded(metastore)
    database, partitioned = data.partitioned

    # when
    response = client.get(tables_url(metastore, database))

    # then
    content = html(response)
    assert response.status_code == 200
    db = next(s.database for s in list_databases(metastore) if s.database.name == database)
    expected = [row.name for row in list_tables(metastore, db, TableFilter(), size=ALL_ROWS).items]
    assert link_names(content, f"{tables_url(metastore, database)}t/") == expected
    assert "partitioned</a>" in row_of(content, f">{partitioned}</strong>")
    acid_db, acid = data.acid
    acid_row = row_of(html(client.get(tables_url(metastore, acid_db))), f">{acid}</strong>")
    assert ">ACID<" in acid_row
    assert 'hx-get="' in content and 'hx-trigger="keyup changed delay:300ms, change"' in content
    assert 'hx-target="#table-list"' in content and 'hx-push-url="true"' in content


def test_the_name_filter_narrows_the_tables(client, metastore):
    # given
    database, table = seeded(metastore).partitioned

    # when
    everything = link_names(html(client.get(tables_url(metastore, database))), f"{tables_url(metastore, database)}t/")
    narrowed = link_names(
        html(client.get(tables_url(metastore, database), {"q": table.upper()})), f"{tables_url(metastore, database)}t/"
    )

    # then
    assert table in narrowed
    assert all(table in name for name in narrowed)
    assert len(narrowed) < len(everything)


@pytest.mark.parametrize(
    ("params", "keep"),
    [
        ({"type": "EXTERNAL_TABLE"}, lambda d: d.table.type == TableType.EXTERNAL),
        ({"type": "VIRTUAL_VIEW"}, lambda d: d.table.type == TableType.VIRTUAL_VIEW),
        ({"partitioned": "true"}, lambda d: bool(d.partition_keys)),
        ({"partitioned": "false"}, lambda d: not d.partition_keys),
        ({"transactional": "true"}, lambda d: d.is_transactional),
    ],
    ids=["external", "views", "partitioned", "unpartitioned", "transactional"],
)
def test_the_type_and_flag_filters_narrow_the_tables(client, metastore, params, keep):
    for database in seeded(metastore).databases:
        # given
        db = next(s.database for s in list_databases(metastore) if s.database.name == database)
        names = [row.name for row in list_tables(metastore, db, TableFilter(), size=ALL_ROWS).items]
        expected = [name for name in names if keep(get_table_detail(metastore, database, name))]

        # when
        response = client.get(tables_url(metastore, database), params)

        # then
        assert response.status_code == 200
        assert link_names(html(response), f"{tables_url(metastore, database)}t/") == expected, database


def test_the_owner_filter_and_sort_apply(client, metastore):
    # given
    database, table = seeded(metastore).partitioned
    db = next(s.database for s in list_databases(metastore) if s.database.name == database)
    owner = next(
        row.owner for row in list_tables(metastore, db, TableFilter(), size=ALL_ROWS).items if row.name == table
    )
    url = tables_url(metastore, database)

    # when
    by_owner = link_names(html(client.get(url, {"owner": owner})), f"{url}t/")
    descending = link_names(html(client.get(url, {"sort": "-name"})), f"{url}t/")

    # then
    assert table in by_owner
    assert by_owner == [r.name for r in list_tables(metastore, db, TableFilter(owner=owner), size=ALL_ROWS).items]
    assert descending == sorted(descending, reverse=True)


def test_tables_are_paged_by_cursor_with_a_way_back_to_the_first_page(client, metastore):
    # given
    database, _ = seeded(metastore).partitioned
    url = tables_url(metastore, database)
    names = link_names(html(client.get(url)), f"{url}t/")

    # when
    first = client.get(url, {"page_size": 2})
    second = client.get(next_link(html(first)))

    # then
    assert link_names(html(first), f"{url}t/") == names[:2]
    assert "cursor=" in next_link(html(first))
    assert "« First page" not in html(first)
    assert link_names(html(second), f"{url}t/") == names[2:4]
    assert "« First page" in html(second)
    assert 'name="page_size"' in html(second) and '<option value="2" selected>' in html(second)


def test_an_htmx_request_gets_only_the_table_list(client, metastore):
    # given
    database, table = seeded(metastore).partitioned
    url = tables_url(metastore, database)

    # when
    partial = client.get(url, {"q": table}, headers={"HX-Request": "true"})
    boosted = client.get(url, {"q": table}, headers={"HX-Request": "true", "HX-Boosted": "true"})
    restore = client.get(url, {"q": table}, headers={"HX-Request": "true", "HX-History-Restore-Request": "true"})

    # then
    assert partial.status_code == 200
    assert "<html" not in html(partial) and "<form" not in html(partial)
    assert '<table class="grid" id="tables">' in html(partial)
    assert f">{table}</strong>" in html(partial)
    assert "HX-Request" in partial["Vary"]
    assert "<html" in html(boosted)
    assert "<html" in html(restore)


# One table ---------------------------------------------------------------------------------------------------------


def test_table_page_shows_columns_storage_partition_keys_and_partition_count(client, metastore):
    # given
    database, table = seeded(metastore).partitioned
    detail = get_table_detail(metastore, database, table)

    # when
    response = client.get(table_url(metastore, database, table))

    # then
    content = html(response)
    assert response.status_code == 200
    columns = content.split('id="columns"')[1].split('id="partition-keys"')[0]
    assert [c.name for c in detail.columns] == re.findall(r'<td class="mono"><strong>([^<]+)</strong>', columns)
    keys = content.split('id="partition-keys"')[1].split("</table>")[0]
    assert [k.name for k in detail.partition_keys] == re.findall(r'<td class="mono"><strong>([^<]+)</strong>', keys)
    assert detail.table.sd.location in content
    assert detail.table.sd.input_format in content and detail.table.sd.output_format in content
    assert detail.table.sd.serde.slib in content
    assert f'href="{partitions_url(metastore, database, table)}">{detail.partition_count} partitions' in content
    parameters = content.split('id="table-parameters"')[1]
    for key in detail.params:
        assert key in parameters


def test_table_page_shows_statistics_privileges_and_serde_parameters(client, metastore):
    # given
    database, table = seeded(metastore).with_column_stats
    detail = get_table_detail(metastore, database, table)

    # when
    content = html(client.get(table_url(metastore, database, table)))

    # then
    stats = content.split('id="column-stats"')[1]
    for stat in detail.column_statistics:
        row = row_of(stats, f"<strong>{stat.column_name}</strong>")
        assert f'<td class="num">{stat.num_nulls}</td>' in row
        assert "accurate" in row
    assert humanize_bytes(detail.basic_stats["totalSize"]) in content.split('id="table-statistics"')[1]
    assert "basic stats accurate" in content
    privileges = content.split('id="privileges"')[1].split("</section>")[0]
    for grant in detail.privileges:
        assert grant.principal_name in privileges and grant.privilege in privileges
    for key in detail.serde_params:
        assert key in content.split('id="storage"')[1].split("</section>")[0]


def test_view_page_shows_the_view_text(client, metastore):
    database, view = seeded(metastore).view
    detail = get_table_detail(metastore, database, view)

    content = html(client.get(table_url(metastore, database, view)))

    assert 'id="view-text"' in content
    assert escape(detail.table.view_original_text) in content
    assert ">view<" in content


def test_acid_table_page_shows_write_ids_transactions_locks_and_compactions(client, metastore):
    # given
    database, table = seeded(metastore).acid
    acid = get_table_detail(metastore, database, table).acid

    # when
    content = html(client.get(table_url(metastore, database, table)))

    # then
    assert 'id="acid"' in content
    next_write_id = "—" if acid.next_write_id is None else str(acid.next_write_id)
    assert f'<span class="value num" id="next-write-id">{next_write_id}</span>' in content
    for txn in acid.open_transactions:
        assert f'<td class="num">{txn.id}</td>' in content
    assert len(re.findall(r"<tr><td class=\"num\">\d+\.\d+</td>", content)) == len(acid.locks)
    section = content.split('id="compaction-queue"')[1] if acid.compaction_queue else ""
    for entry in acid.compaction_queue:
        assert f'<td class="num">{entry.id}</td>' in section
    if acid.completed_compactions:
        assert "succeeded" in content.split('id="completed-compactions"')[1]


# Partitions --------------------------------------------------------------------------------------------------------


def test_partitions_page_lists_partitions_with_sizes_and_a_next_cursor(client, metastore):
    # given
    data = seeded(metastore)
    database, table = data.partitioned
    url = partitions_url(metastore, database, table)
    first_three = data.partitions[:3]

    # when
    response = client.get(url, {"page_size": 2})
    second = client.get(next_link(html(response)))

    # then
    content = html(response)
    assert response.status_code == 200
    assert [m for m in re.findall(r'href="[^"]*/p/([^"]+)/"', content)] == [r.name for r in first_three[:2]]
    row = row_of(content, first_three[0].name)
    if first_three[0].total_size is not None:
        assert humanize_bytes(first_three[0].total_size) in row
    assert first_three[0].location in row
    assert ("fresh" if first_three[0].freshness == "fresh" else "stale") in row
    assert re.findall(r'href="[^"]*/p/([^"]+)/"', html(second))[0] == first_three[2].name
    assert "« First page" in html(second)


def test_partitions_are_flagged_outside_the_table_root_and_missing_on_disk(client, metastore):
    # given
    data = seeded(metastore)
    database, table = data.partitioned
    outside = [r for r in data.partitions if r.outside_table_root]
    missing = [r for r in data.partitions if r.exists_on_disk is False]

    # when
    content = html(client.get(partitions_url(metastore, database, table), {"page_size": ALL_ROWS}))

    # then
    for row in data.partitions:
        html_row = row_of(content, f"/p/{row.name}/")
        assert ("outside table root" in html_row) is row.outside_table_root, row.name
        assert ("missing on disk" in html_row) is (row.exists_on_disk is False), row.name
    assert outside and missing
    assert content.count(">outside table root<") == len(outside)
    assert content.count(">missing on disk<") == len(missing)
    for row in missing:  # its size says its data is gone, not a metastore "0 B" beside the real sizes
        assert re.search(r'bytes">dropped</td>', row_of(content, f"/p/{row.name}/")), row.name


def test_a_partition_key_filter_narrows_to_exact_values(client, metastore):
    # given
    data = seeded(metastore)
    database, table = data.partitioned
    first_key = get_table_detail(metastore, database, table).partition_keys[0].name
    value = data.partitions[0].values[0]
    expected = [r.name for r in data.partitions if r.values[0] == value]

    # when
    response = client.get(partitions_url(metastore, database, table), {f"key.{first_key}": value, "page_size": 500})

    # then
    assert response.status_code == 200
    assert re.findall(r'href="[^"]*/p/([^"]+)/"', html(response)) == expected
    assert len(expected) < len(data.partitions)
    assert f'name="key.{first_key}" value="{value}"' in html(response)


def test_the_partition_name_filter_narrows_by_substring(client, metastore):
    # given
    data = seeded(metastore)
    database, table = data.partitioned
    needle = data.partitions[-1].name.split("/")[-1]
    expected = [r.name for r in data.partitions if needle in r.name]

    # when
    response = client.get(partitions_url(metastore, database, table), {"q": needle}, headers={"HX-Request": "true"})

    # then
    assert re.findall(r'href="[^"]*/p/([^"]+)/"', html(response)) == expected
    assert 0 < len(expected) < len(data.partitions)
    assert "<html" not in html(response) and '<table class="grid" id="partitions">' in html(response)


def test_partition_page_shows_location_parameters_and_column_statistics(client, metastore):
    # given
    data = seeded(metastore)
    database, table = data.partitioned
    row = next(r for r in data.partitions if r.outside_table_root)

    # when
    response = client.get(reverse("catalog:partition", args=[metastore.name, database, table, row.name]))

    # then
    content = html(response)
    assert response.status_code == 200
    assert f'<td class="mono wrap" id="partition-location">{row.location}</td>' in content
    assert "outside table root" in content
    parameters = content.split('id="partition-parameters"')[1].split("</section>")[0]
    assert "numFiles" in parameters and "totalSize" in parameters
    assert '<table class="grid compact" id="column-statistics">' in content
    for value in row.values:
        assert value in content


def test_a_missing_partition_is_flagged_on_its_page(client, metastore):
    database, table = seeded(metastore).partitioned
    row = next(r for r in seeded(metastore).partitions if r.exists_on_disk is False)

    content = html(client.get(reverse("catalog:partition", args=[metastore.name, database, table, row.name])))

    assert "missing on disk" in content


# Search ------------------------------------------------------------------------------------------------------------


def test_search_finds_databases_and_tables(client, metastore):
    # given
    database, table = seeded(metastore).partitioned

    # when
    by_table = client.get("/search/", {"q": table, "metastore": metastore.name})
    by_database = client.get("/search/", {"q": database, "metastore": metastore.name})

    # then
    assert by_table.status_code == 200
    tables = html(by_table).split('id="table-results"')[1]
    assert f'href="{table_url(metastore, database, table)}"' in tables
    databases = html(by_database).split('id="database-results"')[1].split("</section>")[0]
    assert f'href="{tables_url(metastore, database)}"' in databases


def test_search_without_a_query_shows_the_form_and_a_too_short_query_is_a_400(client):
    empty = client.get("/search/")
    short = client.get("/search/", {"q": "x"})

    assert empty.status_code == 200 and 'name="q"' in html(empty)
    assert short.status_code == 400
    assert "Search for at least 2 characters." in html(short)


def test_the_nav_bar_has_a_search_box_for_the_current_metastore(client, metastore):
    content = html(client.get(reverse("catalog:databases", args=[metastore.name])))

    assert '<form class="nav-search" method="get" action="/search/"' in content
    assert f'<input type="hidden" name="metastore" value="{metastore.name}">' in content


# Errors ------------------------------------------------------------------------------------------------------------


def test_unknown_names_are_404_pages_naming_what_was_not_found(client, metastore):
    # given
    database, table = seeded(metastore).partitioned
    cases = {
        "/m/nowhere/": "Metastore &#x27;nowhere&#x27; was not found.",
        tables_url(metastore, "no_such_db"): "Database &#x27;no_such_db&#x27; was not found.",
        table_url(metastore, database, "no_such_table"): f"Table &#x27;{database}.no_such_table&#x27; was not found.",
        partitions_url(metastore, database, "no_such_table"): "no_such_table&#x27; was not found.",
        reverse("catalog:partition", args=[metastore.name, database, table, "dt=1999-01-01/hour=0"]): (
            "Partition &#x27;dt=1999-01-01/hour=0&#x27; was not found."
        ),
        "/search/?q=orders&metastore=nowhere": "Metastore &#x27;nowhere&#x27; was not found.",
    }

    for url, message in cases.items():
        # when
        response = client.get(url)

        # then
        assert response.status_code == 404, url
        assert message in html(response), url
        assert 'id="error-panel"' in html(response)


def test_an_unknown_address_is_the_404_page(client):
    response = client.get("/no/such/page/")

    assert response.status_code == 404
    assert "Page '/no/such/page/' was not found." in html(response)


def test_an_unexpected_failure_is_the_500_page_without_a_traceback(client, metastore, monkeypatch):
    # given
    def broken(*args, **kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr("catalog_admin.views.databases.list_databases", broken)
    client.raise_request_exception = False

    # when
    response = client.get(reverse("catalog:databases", args=[metastore.name]))

    # then
    assert response.status_code == 500
    assert "Something went wrong on our side." in html(response)
    assert "secret internals" not in html(response) and "Traceback" not in html(response)


def test_overview_reports_a_metastore_that_fails_after_its_version_was_read(client, monkeypatch):
    # given: the schema version is cached, then the database goes away
    def gone(metastore):
        raise OperationalError("server closed the connection unexpectedly\nThis probably means ...")

    monkeypatch.setattr("catalog_admin.views.metastores.count_databases", gone)

    # when
    response = client.get("/")

    # then
    row = row_of(html(response), f"<strong>{settings.DEFAULT_METASTORE}</strong>")
    assert response.status_code == 200
    assert "server closed the connection unexpectedly" in row
    assert "This probably means" not in row


def test_partition_addresses_keep_hive_escapes_in_partition_names():
    # Hive percent-escapes path-special characters in PART_NAME (10:00 is stored as 10%3A00).
    name = "ts=2024-01-01 10%3A00/region=eu%2Fwest"

    url = reverse("catalog:partition", args=["m", "db", "t", name])

    # the server percent-decodes the path once (WSGI PATH_INFO) before resolving it
    assert resolve(unquote(url)).kwargs["partition"] == name


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"page_size": "0"}, "page_size must be an integer between 1 and 500, not &#x27;0&#x27;."),
        ({"page_size": "many"}, "page_size must be an integer between 1 and 500"),
        ({"cursor": "not-a-cursor"}, "The cursor is malformed; start again from the first page."),
        ({"type": "TABLE"}, "type must be one of"),
        ({"partitioned": "maybe"}, "partitioned must be true or false, not &#x27;maybe&#x27;."),
        ({"sort": "size"}, "sort must be one of name, -name, created, -created"),
    ],
    ids=["page_size-zero", "page_size-word", "cursor", "type", "partitioned", "sort"],
)
def test_malformed_table_list_parameters_are_400_pages_with_the_reason(client, metastore, params, reason):
    database, _ = seeded(metastore).partitioned

    response = client.get(tables_url(metastore, database), params)

    assert response.status_code == 400
    assert reason in html(response)
    assert "invalid_parameter" in html(response)


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"key.nope": "1"}, "The table has no partition key &#x27;nope&#x27;"),
        ({"cursor": "%%%"}, "The cursor is malformed"),
        ({"page_size": "501"}, "page_size must be an integer between 1 and 500"),
    ],
    ids=["unknown-key", "cursor", "page_size"],
)
def test_malformed_partition_parameters_are_400_pages_with_the_reason(client, metastore, params, reason):
    database, table = seeded(metastore).partitioned

    response = client.get(partitions_url(metastore, database, table), params)

    assert response.status_code == 400
    assert reason in html(response)


def test_an_error_answering_htmx_carries_the_error_panel_for_the_list_container(client, metastore):
    database, _ = seeded(metastore).partitioned

    response = client.get(tables_url(metastore, database), {"page_size": "0"}, headers={"HX-Request": "true"})

    assert response.status_code == 400
    assert 'id="error-panel"' in html(response)  # htmx-config swaps #error-panel of 4xx/5xx into the target


# Template filters --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, "—"),
        (None, "—"),
        ("", "—"),
        (512, "512 B"),
        (1536, "1.5 KiB"),
        ("1048576", "1.0 MiB"),
        (5 * 1024**4, "5.0 TiB"),
    ],
)
def test_humanize_bytes(value, expected):
    assert humanize_bytes(value) == expected if value else humanize_bytes(value) in ("—", "0 B")


@pytest.mark.parametrize(
    ("value", "expected"),
    [(29993, "29,993"), ("134217728", "134,217,728"), (7, "7"), (1234.56, "1,234.6"), (None, "—"), ("", "—")],
)
def test_numbers_are_grouped_by_thousands(value, expected):
    assert grouped(value) == expected


def test_a_partition_whose_directory_is_gone_shows_dropped_not_a_size():
    # given
    gone = SimpleNamespace(exists_on_disk=False, total_size=0)
    present = SimpleNamespace(exists_on_disk=True, total_size=64000)
    unchecked = SimpleNamespace(exists_on_disk=None, total_size=1024)

    # then
    assert [partition_size(p) for p in (gone, present, unchecked)] == ["dropped", "62.5 KiB", "1.0 KiB"]


def test_partition_lists_sort_naturally():
    # given
    names = ["dt=10", "dt=2", "dt=1/hr=10", "dt=1/hr=9", "dt=b", "dt=a"]

    # when
    ordered = natural_order([{"name": n} for n in names], "name")

    # then
    assert [p["name"] for p in ordered] == ["dt=1/hr=9", "dt=1/hr=10", "dt=2", "dt=10", "dt=a", "dt=b"]


def test_hive_times_are_epoch_seconds_or_milliseconds_shown_in_utc():
    assert epoch(1704067200) == "2024-01-01 00:00:00 UTC"
    assert epoch_ms(1704067200123) == "2024-01-01 00:00:00 UTC"
    assert epoch(0) == "—" and epoch(None) == "—" and epoch("x") == "—"


def test_table_types_read_as_words():
    assert [table_type(t) for t in TableType.values] == ["managed", "external", "view", "materialized view"]
